"""MMR, ordering of models and reference protocols, rich and CSV output."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from rich.console import Console

from confide.envs.calbench.rating import (
    LeaderboardState,
    Metric,
    apply_results,
    build_leaderboard,
    mmr,
    model_standings,
    parse_results,
    print_leaderboard,
    reference_standings,
    write_model_csv,
    write_reference_csv,
)
from confide.envs.calbench.rating.output import MODEL_CSV_COLUMNS, REFERENCE_CSV_COLUMNS
from confide.envs.calbench.rating.update import run_digest


def _row(
    name: str, coordination: float, cost: float, vps: float | None, **kw: object
) -> dict[str, object]:
    return {
        "run_id": kw.get("run", "r1"),
        "game_id": kw.get("game", "g1"),
        "seat": name,
        "participant": name,
        "is_reference": kw.get("reference", False),
        "coordination": coordination,
        "excess_cost": cost,
        "excess_vps": vps,
    }


def _board() -> LeaderboardState:
    rows = []
    for game in ("g1", "g2"):
        rows += [
            _row("m/strong", 1.0, 0.0, 1.0, game=game),
            _row("m/weak", 0.0, 10.0, 8.0, game=game),
            _row("imap", 1.0, 0.0, 12.0, game=game, reference=True),
            _row("sdmap", 1.0, 3.0, 2.0, game=game, reference=True),
            _row("dsm", 0.5, 0.0, 0.0, game=game, reference=True),
        ]
    rows.append(_row("dsm-private", 1.0, 0.0, None, game="g3", reference=True))
    return build_leaderboard(rows)


def test_mmr_is_mean_conservative_rating() -> None:
    state = _board()
    record = state.models["m/strong"]
    expected = sum(record.ratings[m].mu - 3 * record.ratings[m].sigma for m in Metric) / 3
    assert mmr(record, state.config) == pytest.approx(expected, abs=1e-12)


def test_unrated_participant_has_mmr_zero() -> None:
    state = build_leaderboard([_row("m/alone", 1.0, 0.0, 0.0)])
    assert mmr(state.models["m/alone"], state.config) == pytest.approx(0.0, abs=1e-12)


def test_models_ordered_by_mmr_then_name() -> None:
    standings = model_standings(_board())
    assert [(s.rank, s.participant) for s in standings] == [(1, "m/strong"), (2, "m/weak")]
    assert standings[0].means[Metric.COORDINATION] == 1.0
    tied = build_leaderboard([_row("m/z", 0.5, 1, 1), _row("m/y", 0.5, 1, 1)])
    assert [s.participant for s in model_standings(tied)] == ["m/y", "m/z"]


def test_references_ordered_by_raw_metrics() -> None:
    """Coordination desc, then excess cost asc, then excess VPS asc; unmeasured VPS last."""
    names = [s.participant for s in reference_standings(_board())]
    assert names == ["imap", "dsm-private", "sdmap", "dsm"]


def test_csv_files(tmp_path: Path) -> None:
    state = _board()
    write_model_csv(state, tmp_path / "leaderboard.csv")
    write_reference_csv(state, tmp_path / "references.csv")
    with (tmp_path / "leaderboard.csv").open() as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == MODEL_CSV_COLUMNS
        rows = list(reader)
    assert [r["participant"] for r in rows] == ["m/strong", "m/weak"]
    strong = state.models["m/strong"]
    assert float(rows[0]["excess_vps_mu"]) == strong.ratings[Metric.EXCESS_VPS].mu
    assert float(rows[0]["mmr"]) == mmr(strong, state.config)
    assert rows[1]["excess_cost_mean"] == "10.0"
    with (tmp_path / "references.csv").open() as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == REFERENCE_CSV_COLUMNS
        refs = list(reader)
    assert refs[1] == {
        "rank": "2",
        "participant": "dsm-private",
        "coordination_mean": "1.0",
        "excess_cost_mean": "0.0",
        "excess_vps_mean": "",
        "excess_uniform_mean": "",
        "excess_varied_mean": "",
        "seats": "1",
        "games": "1",
    }


def test_printer_shows_both_tables() -> None:
    console = Console(record=True, width=160)
    print_leaderboard(_board(), console)
    text = console.export_text()
    assert "m/strong" in text and "imap" in text and "Reference protocols" in text
    assert "100.0%" in text


def test_printer_omits_empty_reference_table() -> None:
    console = Console(record=True, width=160)
    print_leaderboard(build_leaderboard([_row("m/a", 1, 0, 0), _row("m/b", 0, 0, 0)]), console)
    assert "Reference protocols" not in console.export_text()


def test_setting_excess_is_shown_per_setting_and_never_rated() -> None:
    base = {"run_id": "r", "participant": "imap", "is_reference": True, "coordination": 1.0}
    rows = [
        {**base, "game_id": "g1", "seat": "0", "excess_cost": 10.0,
         "cost_setting": "varied", "excess": 2.0},
        {**base, "game_id": "g1", "seat": "1", "excess_cost": 0.0,
         "cost_setting": "varied", "excess": 0.0},
        {**base, "game_id": "g2", "seat": "0", "excess_cost": 1.0,
         "cost_setting": "uniform", "excess": 1.0},
    ]
    state = apply_results(LeaderboardState(), rows)
    (standing,) = reference_standings(state)
    assert standing.setting_excess == {"uniform": 1.0, "varied": 1.0}
    assert standing.means[Metric.EXCESS_COST] == 11.0 / 3
    bare = [{k: v for k, v in r.items() if k not in ("cost_setting", "excess")} for r in rows]
    assert run_digest(parse_results(rows)) == run_digest(parse_results(bare))
