"""The four F.5 tables written for a run directory (the CalBench paper §F.5): columns, row counts,
values, byte-identical reruns, and a clear error for a trace without its scenario."""

from __future__ import annotations

import asyncio
import csv
import gzip
from pathlib import Path

import pytest
from test_calbench_engine_support import errand, scenario

from confide.core.trace import EpisodeStart, Trace, TraceRecorder
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.engine import Game
from confide.envs.calbench.outputs.privacy import write_privacy_outputs
from confide.envs.calbench.participants.dsm import (
    DSM_PRIVATE,
    DSM_WELFARE,
    DsmParticipant,
    DsmPreset,
)
from confide.envs.calbench.privacy import VpsError
from confide.envs.calbench.scenario import Scenario

F5_COLUMNS = {
    "belief_evidence.csv.gz": [
        "trace_path", "game_id", "event_index", "round", "target_agent", "observer_agent",
        "slot", "source", "evidence", "strength", "belief_before", "belief_after",
    ],
    "pair_round_vps.csv.gz": [
        "trace_path", "game_id", "round", "target_agent", "observer_agent",
        "target_is_participant", "observer_is_participant", "num_agents", "num_slots",
        "observations", "prior_distance_to_ideal", "posterior_distance_to_ideal", "vps_loss",
        "vps_loss_per_slot", "prior",
    ],
    "game_summary.csv": [
        "trace_path", "game_id", "pair_round_count", "observed_pair_round_count",
        "vps_loss_total", "vps_loss_mean_all_pair_rounds", "vps_loss_mean_observed_pair_rounds",
        "participant_pair_vps_loss_total", "participant_pair_vps_loss_mean_all_pair_rounds",
        "participant_pair_vps_loss_mean_observed_pair_rounds",
        "observation_count", "excess_vps_loss_mean",
    ],
    "game_target_summary.csv": [
        "trace_path", "game_id", "target_agent", "vps_loss_total",
        "participant_pair_vps_loss_total", "vps_floor", "excess_vps_loss_total",
    ],
}


def _task() -> Scenario:
    """The 2-agent game of test_calbench_dsm_game.py (VPS derived there)."""
    return scenario(
        [
            [None, errand(1), errand(2, blocked=True), None],
            [errand(3), None, None, errand(4, blocked=True)],
        ],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (0, 1))],
        task_id="two",
    )


def _trace(task: Scenario, preset: DsmPreset, episode: str) -> Trace:
    rec = TraceRecorder(episode)
    rec.emit(EpisodeStart(episode_id=episode, benchmark="calbench", scenario_id=task.task_id,
                          seed=0))
    seats = {seat_of(a): DsmParticipant(seat_of(a), preset) for a in range(task.num_agents)}
    asyncio.run(Game(task, seats, rec).play())
    trace = rec.as_trace()
    trace.path = f"traces/{episode}.jsonl"
    return trace


def _lines(path: Path) -> list[str]:
    """A table's lines; the per-update and per-pair tables are gzipped."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        assert data[:2] == b"\x1f\x8b" and data[3:8] == b"\0\0\0\0\0"  # no name, no mtime
        data = gzip.decompress(data)
    return data.decode("utf-8").splitlines()


def _read(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(_lines(path)))


def _6(cell: str) -> str:
    """A float cell (written exactly, `repr`) to six decimals, as the hand values are."""
    return f"{float(cell):.6f}"


def test_tables_have_f5_columns_and_hand_values(tmp_path: Path) -> None:
    task = _task()
    traces = [_trace(task, DSM_WELFARE, "w"), _trace(task, DSM_PRIVATE, "p")]
    write_privacy_outputs(tmp_path, traces, {task.task_id: task})
    for name, columns in F5_COLUMNS.items():
        assert next(csv.reader(_lines(tmp_path / name))) == columns
    games = _read(tmp_path / "game_summary.csv")
    assert [g["game_id"] for g in games] == ["p", "w"]  # sorted, whatever the input order
    welfare = games[1]
    assert welfare["trace_path"] == "traces/w.jsonl"
    assert _6(welfare["vps_loss_total"]) == "5.818182"  # 3.0 + 2 (10/11 - 1/2) + 2
    assert welfare["pair_round_count"] == "4"
    targets = _read(tmp_path / "game_target_summary.csv")
    assert [(t["game_id"], t["target_agent"], _6(t["vps_loss_total"]),
             _6(t["excess_vps_loss_total"])) for t in targets] == [
        ("p", "0", "1.000000", "0.000000"), ("p", "1", "0.909091", "0.000000"),
        ("w", "0", "3.000000", "0.000000"), ("w", "1", "2.818182", "0.000000"),
    ]
    assert {t["vps_floor"] for t in targets} == {"5.0"}
    pairs = _read(tmp_path / "pair_round_vps.csv.gz")
    assert len(pairs) == 8
    assert {p["target_is_participant"] for p in pairs} == {"True"}
    evidence = _read(tmp_path / "belief_evidence.csv.gz")
    assert {e["source"] for e in evidence} == {"dsm_proposal", "dsm_score", "dsm_decision"}


def test_rerun_is_byte_identical(tmp_path: Path) -> None:
    task = _task()
    first, second = tmp_path / "a", tmp_path / "b"
    write_privacy_outputs(first, [_trace(task, DSM_WELFARE, "w")], {task.task_id: task})
    write_privacy_outputs(second, [_trace(task, DSM_WELFARE, "w")], {task.task_id: task})
    for name in F5_COLUMNS:
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_missing_scenario_is_named(tmp_path: Path) -> None:
    task = _task()
    with pytest.raises(VpsError, match=r"traces/w\.jsonl: scenario 'two' is not among the 0"):
        write_privacy_outputs(tmp_path, [_trace(task, DSM_WELFARE, "w")], {})


def test_leak_counts_from_the_summary_are_the_evidence_rows(tmp_path: Path) -> None:
    """The report counts a game's belief updates from game_summary.csv's
    observation_count instead of reading every evidence row: the two must agree."""
    from collections import Counter

    from confide.envs.calbench.view import BeliefLeaks

    task = _task()
    traces = [_trace(task, DSM_WELFARE, "w"), _trace(task, DSM_PRIVATE, "p")]
    write_privacy_outputs(tmp_path, traces, {task.task_id: task})
    evidence = Counter(e["game_id"] for e in _read(tmp_path / "belief_evidence.csv.gz"))
    assert set(evidence) == {"w", "p"}
    assert BeliefLeaks(tmp_path).counts == evidence
    (tmp_path / "game_summary.csv").unlink()  # a run without it: counted from the evidence
    assert BeliefLeaks(tmp_path).counts == evidence


def test_every_pair_table_starts_with_the_pair_key_columns() -> None:
    """PairRoundRow is a named tuple (cheap to build), so it repeats PairKey's fields
    rather than extending it: the protocol and model pair tables must still line up."""
    from dataclasses import fields

    from confide.envs.calbench.privacy.deltas import PairRow
    from confide.envs.calbench.privacy.vps import PairKey, PairRoundRow

    key = tuple(f.name for f in fields(PairKey))
    assert PairRoundRow._fields[: len(key)] == key
    assert tuple(f.name for f in fields(PairRow))[: len(key)] == key
