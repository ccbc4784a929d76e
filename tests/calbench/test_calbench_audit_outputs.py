"""Run-directory tables and leaderboard wiring: `write_audit_outputs` on scripted traces
(byte-identical on rewrite), the leaderboard columns of a seat, and a `tiny`-suite run
through the runner whose results.csv `confide leaderboard` rates, identically on rerun."""

from __future__ import annotations

import asyncio
import csv
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_calbench_judge_vps import _judge
from test_calbench_reflect_support import as_trace, play, task
from test_calbench_reflect_vps import _hook, _models
from typer.testing import CliRunner

import confide.envs.calbench.env as calbench_env
from confide.cli.main import app
from confide.core.benchmark import SeatSpec, expand_lineup, parse_lineup
from confide.core.trace import Trace, TraceFiles, trace_files, trace_text
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.audits import leaderboard_columns
from confide.envs.calbench.judge import judge_game
from confide.envs.calbench.outputs.audits import write_audit_outputs, write_calbench_outputs
from confide.envs.calbench.participants import ImapParticipant, make_reference
from confide.llm import MockModel, register_mock
from confide.llm.providers.mock_registry import json_reply
from confide.runner.config import Experiment
from confide.runner.execute import run_experiment

ALWAYS = [
    "semantic_leakage.csv", "semantic_leakage_summary.csv", "own_slot_disclosure.csv",
    "own_slot_disclosure_summary.csv", "g1_completion_regret.csv",
    "g2_first_speaker_units.csv", "g2_first_speaker_tests.csv", "g3_messages_by_meeting.csv",
    "g3_messages_by_speaker_role.csv", "g4_prior_meeting_reschedules.csv",
]
REFLECTION = [
    "reflection_beliefs.csv", "reflection_pair_round_vps.csv",
    "reflection_game_target_summary.csv",
]
JUDGE = [
    "judge_cases.json", "judge_beliefs.csv", "judge_pair_round_vps.csv",
    "judge_game_target_summary.csv", "metric_comparison.csv", "judge_precision_summary.csv",
    "judge_vs_reflection_precision.csv", "judge_more_precise_than_reflection.csv",
    "judge_reflection_cell_agreement.csv", "judge_reflection_agreement.csv",
]


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _traces() -> list[Trace]:
    plain = play(task(), episode="g0", finish=True)
    measured = play(task(), _hook(_models()), episode="g1")
    for event in asyncio.run(judge_game(task(), measured.events, _judge())):
        measured.emit(event)
    return [as_trace(measured, "traces/g1.jsonl"), as_trace(plain, "traces/g0.jsonl")]


def test_tables_written_and_byte_identical(tmp_path: Path) -> None:
    written = write_audit_outputs(tmp_path / "a", _traces(), {"reflect": task()})
    assert [p.name for p in written] == ALWAYS + REFLECTION + JUDGE
    write_audit_outputs(tmp_path / "b", _traces(), {"reflect": task()})
    for name in ALWAYS + REFLECTION + JUDGE:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    comparison = _read(tmp_path / "a" / "metric_comparison.csv")[0]
    # judge raw 9, calibrated 8 (test_calbench_judge_vps); reflection calibrated 2 + 7/3 + 8/3
    assert comparison["raw_judge_vps"] == "9.0"
    assert comparison["calibrated_judge_vps"] == "8.0"
    assert comparison["calibrated_reflection_vps"] == "7.0"
    assert comparison["judge_cases"] == "4" and comparison["games"] == "1"
    agreement = _read(tmp_path / "a" / "judge_reflection_agreement.csv")[0]
    assert agreement["union_cells"] == "24" and agreement["both_nonzero"] == "6"
    units = _read(tmp_path / "a" / "g2_first_speaker_units.csv")
    assert [u["game_id"] for u in units] == ["g0"] * 4 + ["g1"] * 4  # game order
    assert all(u["excess_vps"] == "" for u in units[:4])  # g0 has no reflections
    beliefs = _read(tmp_path / "a" / "reflection_beliefs.csv")
    assert len(beliefs) == 10 and all(b["delta"] != "0" for b in beliefs)


def test_leaderboard_columns_of_the_scripted_game() -> None:
    rec = play(task(), _hook(_models()), finish=True)
    binding = expand_lineup(parse_lineup("mock/a,mock/b,imap"), [seat_of(a) for a in range(3)])
    columns = leaderboard_columns(task(), rec.events, {0: 1.0, 1: 1.0, 2: 1.0}, binding, "g1")
    # excess over the scheduled-only oracle (cost 0): agents 1 and 2 each paid 1
    assert [c["excess_cost"] for c in columns.values()] == [0.0, 1.0, 1.0]
    assert [c["is_reference"] for c in columns.values()] == [False, False, True]
    # model seats: reflection excess unmeasured (observer 2's answers about them were
    # unreadable: missing, not zero belief change); the reference seat: the
    # protocol-semantic excess of its (untyped) messages, 0
    assert [c["excess_vps"] for c in columns.values()] == [None, None, 0.0]
    plain = play(task(), finish=True)
    columns = leaderboard_columns(task(), plain.events, {0: 1.0}, binding, "g0")
    assert columns[0]["excess_vps"] is None and columns[1]["coordination"] is None


def _stand_in(seat: str, spec: SeatSpec, options: Any, *rest: Any) -> Any:
    """Model seats played by IMAP under the model's name (the LLM agent is not needed to
    test the rating wiring)."""
    if not spec.is_model:
        return make_reference(seat, spec.raw, options)
    player = ImapParticipant(seat)
    player.name = spec.raw
    return player


def test_tiny_run_feeds_the_leaderboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calbench_env, "make_participant", _stand_in)
    # the stand-in seats still answer the post-round reflection calls (F.3) through their
    # model: schema-valid minimal replies (no belief change)
    for name in ("alpha", "beta"):
        register_mock(name, lambda name=name, **_: MockModel(json_reply, name=name), replace=True)
    run_dir = tmp_path / "run"
    summary = run_experiment(Experiment(
        benchmark="calbench", suite="tiny", limit=3, lineups=["mock/alpha,mock/beta,imap"],
        conditions=["dm"], roles={"judge": "mock/json"}, output_dir=str(run_dir),
        concurrency=2,
    ), show_progress=False)
    assert not summary.failed
    rows = _read(run_dir / "results.csv")
    assert len(rows) == 9
    for row in rows:
        assert row["game_id"] == row["episode_id"]
        assert row["is_reference"] == str(row["participant"] == "imap")
        assert row["coordination"] == row["success"]
        assert float(row["excess_cost"]) >= 0.0
        # reference seats: protocol-semantic VPS; model seats: reflection-calibrated VPS
        assert row["excess_vps"] != ""
    for name in [*ALWAYS, *JUDGE[:4], "game_target_summary.csv"]:
        assert (run_dir / name).exists(), name
    runner = CliRunner()
    first = runner.invoke(app, ["leaderboard", str(run_dir), "--out", str(tmp_path / "lb1")])
    assert first.exit_code == 0, first.output
    assert "mock/alpha" in first.output and "imap" in first.output
    again = runner.invoke(app, ["leaderboard", str(run_dir), "--out", str(tmp_path / "lb1")])
    fresh = runner.invoke(app, ["leaderboard", str(run_dir), "--out", str(tmp_path / "lb2")])
    assert again.exit_code == 0 and fresh.exit_code == 0
    for name in ("ratings.json", "leaderboard.csv", "references.csv"):
        assert (tmp_path / "lb1" / name).read_bytes() == (tmp_path / "lb2" / name).read_bytes()
    assert again.output == first.output
    _carried_tables_match_traces(run_dir, tmp_path / "from_traces")


def _carried_tables_match_traces(run_dir: Path, again: Path) -> None:
    """The run wrote its tables from the rows each game's scorer computed (carried in the
    footer, `write_calbench_tables`); `write_calbench_outputs` rebuilds them from the
    traces read back: the same bytes, model tables (reflection, judge) included. The
    trace files carry no tables."""
    again.mkdir()
    shutil.copy(run_dir / "experiment.yaml", again / "experiment.yaml")
    paths = trace_files(run_dir / "traces")
    assert all('"tables"' not in trace_text(p).splitlines()[-1] for p in paths)
    write_calbench_outputs(again, TraceFiles(paths))
    written = sorted(p.name for p in again.iterdir() if p.name != "experiment.yaml")
    assert set(written) >= {*ALWAYS, *REFLECTION, *JUDGE, "belief_evidence.csv.gz"}
    for name in written:
        assert (again / name).read_bytes() == (run_dir / name).read_bytes(), name


def test_game_spool_gives_back_what_it_was_given(tmp_path: Path) -> None:
    """The spool pickles slotted rows as constructor calls (outputs/audits.py): every
    game's tables come back equal, field for field, and in (game id, path) order."""
    from dataclasses import replace

    from confide.envs.calbench.audits.common import game_record
    from confide.envs.calbench.audits.scored import game_tables
    from confide.envs.calbench.outputs.audits import GameSpool
    from confide.envs.calbench.privacy.vps import vps_rows

    scenario = task()
    trace = as_trace(play(scenario, _hook(_models()), finish=True))
    game = game_record(trace, {scenario.task_id: scenario})
    tables = game_tables(game, vps_rows(scenario, game.events, trace_path=trace.path))
    games = [replace(tables, trace_path=p) for p in ("b", "a")]
    spool = GameSpool(tmp_path)
    try:
        for game in games:
            spool.add(game)
        back = list(spool)
    finally:
        spool.close()
    assert back == games[::-1]
    assert back[0].units and back[0].reflected is not None


def test_merged_game_sums_give_the_one_pass_summaries() -> None:
    """The output phase merges each game's summary counts (`GameSums`, computed where
    the game is scored) in game order: the rows equal the one-pass summaries over the
    games' tallies and units, to the last bit (three games, two lineups)."""
    from confide.envs.calbench.audits import analyses, own_slot, semantic
    from confide.envs.calbench.audits.common import game_record
    from confide.envs.calbench.audits.scored import GameSums

    scenario = task()
    records = [
        game_record(as_trace(play(scenario, _hook(_models()), episode=gid, lineup=lineup,
                                  finish=True), f"traces/{gid}.jsonl"),
                    {scenario.task_id: scenario})
        for gid, lineup in (("g0", ("mock/a", "mock/b", "imap")),
                            ("g1", ("imap", "imap", "imap")),
                            ("g2", ("mock/a", "mock/b", "imap")))
    ]
    tallies = [game.tally() for game in records]
    units = [analyses.speaker_units(game) for game in records]
    leaks = [row for game in records for row in semantic.game_leaks(game)]
    disclosures = [row for game in records for row in own_slot.game_disclosures(game)]
    merged = GameSums()
    for tally, mine in zip(tallies, units, strict=True):
        merged.merge(GameSums.of(tally, mine))
    assert merged.regret.rows() == analyses.completion_regret(tallies)
    assert merged.speakers.rows() == analyses.first_speaker_tests(
        u for mine in units for u in mine)
    assert merged.messages.rows() == analyses.messages_by_meeting(tallies)
    assert merged.reschedules.rows() == analyses.prior_reschedules(tallies)
    assert merged.leaks.rows(leaks) == semantic.leak_summary(tallies, leaks)
    assert merged.disclosures.rows(disclosures) == own_slot.disclosure_summary(
        tallies, disclosures)
    assert {r.participant for r in merged.regret.rows()} == {"all", "imap", "mock/a", "mock/b"}
    later = GameSums.of(tallies[0], units[0])  # g0 again: not after g2
    with pytest.raises(ValueError, match="out of order"):
        merged.merge(later)
