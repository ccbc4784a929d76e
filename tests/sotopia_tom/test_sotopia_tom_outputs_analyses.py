"""The paper's analyses (the Sotopia-ToM paper §6.1-6.3, A.11): hand-computed small cases, and the
files a `reference` + `leaky` run writes and its report embeds."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from confide.envs.sotopia_tom.dataset import load_split
from confide.envs.sotopia_tom.outputs.analyses import (
    EpisodeRecord,
    FailureMode,
    acquisition_by_round,
    classify_inquiry,
    ia_failure_modes,
    paired_win_rates,
    results_by_sector,
    talk_rate,
)
from confide.registry import get_benchmark

SRC = Path(__file__).resolve().parents[2] / "src"


def rec(
    model: str = "m",
    strategy: str = "basic",
    scenario: str = "s1",
    *,
    sector: str = "Healthcare",
    agents: int = 3,
    rounds: int = 2,
    messages: int = 6,
    infomgmt: float | None = 0.5,
    acquired: tuple[int | None, ...] | None = (),
    ia_failures: tuple[FailureMode, ...] | None = (),
) -> EpisodeRecord:
    return EpisodeRecord(
        scenario_id=scenario,
        repetition=0,
        model=model,
        strategy=strategy,
        sector=sector,
        agents=agents,
        rounds=rounds,
        messages=messages,
        infomgmt=infomgmt,
        acquired=acquired,
        ia_failures=ia_failures,
    )


def test_acquisition_by_round_is_cumulative_over_every_desired_item() -> None:
    records = [
        rec(acquired=(1, None), rounds=2),
        rec(scenario="s2", acquired=(2,), rounds=3),
        rec(scenario="s3", acquired=None, rounds=9),  # failed EFF verdict: left out of shares
    ]
    rows = acquisition_by_round(records)
    assert [(r["round"], r["acquired"], r["desired"]) for r in rows][:3] == [
        (1, 1, 3),
        (2, 2, 3),
        (3, 2, 3),
    ]
    assert rows[0]["share"] == pytest.approx(1 / 3) and rows[2]["share"] == pytest.approx(2 / 3)


def test_results_by_sector_orders_sectors_easiest_first() -> None:
    records = [
        rec(infomgmt=0.8),
        rec(scenario="s2", infomgmt=0.6),
        rec(scenario="s3", infomgmt=None),  # a failed verdict is missing, not zero
        rec(scenario="s4", sector="Legal", infomgmt=0.2),
        rec("leaky", "-", "s4", sector="Legal", infomgmt=0.4),
    ]
    rows = [
        (r["sector"], r["model"], r["episodes"], r["InfoMgmt"]) for r in results_by_sector(records)
    ]
    assert rows == [
        ("Healthcare", "m", 2, pytest.approx(0.7)),
        ("Legal", "leaky", 1, 0.4),
        ("Legal", "m", 1, 0.2),
    ]


def test_talk_rate_is_the_mean_of_per_episode_rates() -> None:
    records = [rec(messages=6, rounds=2), rec(scenario="s2", messages=3, rounds=4)]
    (row,) = talk_rate(records)
    assert (row["avg_rounds"], row["avg_messages"]) == (3.0, 4.5)
    assert row["talk_rate"] == pytest.approx((6 / 6 + 3 / 12) / 2)  # 0.625, not 4.5 / 9


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (set(), "never_asked"),
        ({("Bo", "private")}, None),
        ({("Bo", "public")}, "wrong_channel"),
        ({("*", "public")}, "wrong_person"),
        ({("Bo", "private"), ("Cy", "private")}, "wrong_person"),
    ],
)
def test_classify_inquiry(actual: set[tuple[str, str]], expected: str | None) -> None:
    assert classify_inquiry(actual, "Bo", "private") == expected


def test_ia_failure_modes_shares() -> None:
    records = [
        rec(ia_failures=("never_asked", "wrong_person")),
        rec(scenario="s2", ia_failures=("never_asked",)),
        rec(scenario="s3", ia_failures=None),  # failed IA verdict: left out
    ]
    (row,) = ia_failure_modes(records)
    assert row["failed_items"] == 3
    assert (row["never_asked"], row["wrong_person"], row["wrong_channel"]) == (2, 1, 0)
    assert row["never_asked_share"] == pytest.approx(2 / 3) and row["wrong_channel_share"] == 0


def test_paired_win_rates_pair_strategies_within_a_model_and_models_within_a_strategy() -> None:
    records = [
        rec("m", "basic", "s1", infomgmt=0.3),
        rec("m", "basic", "s2", infomgmt=0.5),
        rec("m", "basic", "s3", infomgmt=0.4),
        rec("m", "tom-belief", "s1", infomgmt=0.6),
        rec("m", "tom-belief", "s2", infomgmt=0.5),
        rec("m", "tom-belief", "s3", infomgmt=0.2),
        rec("m", "tom-belief", "s4", infomgmt=0.9),  # unpaired
        rec("m2", "basic", "s1", infomgmt=0.1),
        rec("m2", "tom-belief", "s2", infomgmt=None),  # failed verdict: no pair
    ]
    rows = {(r["compare"], r["a"], r["b"]): r for r in paired_win_rates(records)}
    assert set(rows) == {("strategy", "basic", "tom-belief"), ("model", "m", "m2")}
    strategies = rows[("strategy", "basic", "tom-belief")]
    counts = [strategies[k] for k in ("pairs", "a_wins", "ties", "b_wins")]
    assert counts == [3, 1, 1, 1]
    assert strategies["b_win_rate"] == pytest.approx(1 / 3)
    models = rows[("model", "m", "m2")]
    assert (models["pairs"], models["a_win_rate"]) == (1, 1.0)


@pytest.fixture(scope="module")
def two_lineup_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("analyses")
    command = [
        sys.executable, "-m", "confide.cli.main", "run", "sotopia-tom",
        "--lineup", "reference", "--lineup", "leaky", "--out", str(out), "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr
    return out


def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_analysis_is_written_and_in_the_report(two_lineup_run: Path) -> None:
    run = two_lineup_run
    for name in (
        "figure3a_acquisition_by_round",
        "figure22_infomgmt_by_sector",
        "ia_failure_modes",
    ):
        assert (run / f"{name}.csv").is_file() and (run / "figures" / f"{name}.png").is_file()
    report = (run / "report.html").read_text(encoding="utf-8")
    sections = get_benchmark("sotopia-tom").view.sections  # type: ignore[union-attr]
    for shown in (
        *(f"<strong>{sections[f'figures/{name}.png'].title}.</strong>" for name in (
            "figure3a_acquisition_by_round", "figure22_infomgmt_by_sector", "ia_failure_modes")),
        "table4_talk_rate.csv",
        "paired_win_rates.csv",
    ):
        assert shown in report
    (pair,) = _rows(run / "paired_win_rates.csv")
    assert (pair["compare"], pair["a"], pair["b"], pair["pairs"]) == (
        "model",
        "leaky",
        "reference",
        str(len(load_split("core"))),
    )
    assert pair["b_win_rate"] == "1.0"  # the reference lineup beats the leaky one everywhere
    sectors = _rows(run / "figure22_infomgmt_by_sector.csv")
    assert len({r["sector"] for r in sectors}) == 8 and len(sectors) == 16
    shares = [float(r["share"]) for r in _rows(run / "figure3a_acquisition_by_round.csv")]
    assert all(0.0 <= s <= 1.0 for s in shares)
    talk = _rows(run / "table4_talk_rate.csv")
    assert {r["model"] for r in talk} == {"reference", "leaky"}
    failures = _rows(run / "ia_failure_modes.csv")
    assert [r["failed_items"] for r in failures] == ["0", "0"]  # both ask only the owner
