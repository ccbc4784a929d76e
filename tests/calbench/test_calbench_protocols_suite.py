"""Reference protocols on the shipped suites and the public fixtures: IMAP's D.1
footprint on the canonical suite, conformance (no leaks, determinism) for every protocol
and condition, and the `confide run calbench` command."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from confide.core.benchmark import EpisodeContext, EpisodeResult, parse_lineup
from confide.core.trace import TraceRecorder
from confide.envs.calbench import SPEC
from confide.envs.calbench.env import private_markers, run_episode
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import DATA_DIR, load_suite
from confide.testing import check_env

SHARED = Path(os.environ.get("CONFIDE_SHARED", "/work/shared"))
FIXTURES = SHARED / "anchors" / "calbench" / "tasks"


def _no_models(spec: str, **_: Any) -> Any:
    raise AssertionError(f"no model expected, asked for {spec}")


def _run(task: Scenario, lineup: str, condition: str = "dm") -> EpisodeResult:
    ctx = EpisodeContext(
        episode_id="t",
        task=task,
        lineup=parse_lineup(lineup),
        seed=0,
        trace=TraceRecorder(),
        model_factory=_no_models,
        condition=condition,
    )
    return asyncio.run(run_episode(ctx))


def test_imap_schedules_everything_with_two_messages_per_participant_meeting() -> None:
    """D.1: 2 DMs per responder plus a decision per responder = 6 messages for the 3
    participants of every canonical meeting, so exactly 2.00 per successful
    participant-meeting, per game and as the mean of the per-seat E_{g,i} (each canonical
    agent attends exactly 3 meetings and initiates 1 on average)."""
    tasks = load_suite("canonical")
    assert len(tasks) == 90
    seat_means = []
    for task in tasks:
        result = _run(task, "imap")
        assert result.metrics["meetings_scheduled"] == 5, task.id
        assert result.metrics["messages_per_meeting"] == 2.0, task.id
        seat_means.append(sum(r["messages_per_meeting"] for r in result.rows) / len(result.rows))
    assert sum(seat_means) / len(seat_means) == 2.0


@pytest.mark.parametrize("lineup", ["imap", "sdmap", "imap,sdmap,imap"])
@pytest.mark.parametrize("condition", SPEC.conditions)
def test_conformance_for_every_protocol_and_condition(lineup: str, condition: str) -> None:
    task = load_suite("tiny", label_bank=DATA_DIR / "label_bank_v1.json")[3]
    assert any(private_markers(task).values())
    capture = check_env(SPEC, task, lineup, seed=5, condition=condition)
    assert capture.observations


def test_private_markers_are_own_errand_labels_only() -> None:
    task = load_suite("tiny", label_bank=DATA_DIR / "label_bank_v1.json")[0]
    markers = private_markers(task)
    texts = task.private_texts()
    for agent, cal in enumerate(task.to_calendars()):
        own = {texts[i.label_id] for i in cal.slots if i is not None and i.label_id}
        assert set(markers[f"agent{agent}"]) <= own


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="public CalBench fixtures not available")
@pytest.mark.parametrize("name", ["uniform_full.jsonl", "varied_full.jsonl"])
def test_public_fixture_tasks_play(name: str) -> None:
    tasks = SPEC.load_tasks(None, str(FIXTURES / name))
    assert len(tasks) == 108
    for task in tasks[36:39]:  # the 5-agent, 3-participant slice
        result = _run(task, "imap")
        assert result.metrics["meetings_scheduled"] == 5
        assert result.metrics["messages_per_meeting"] == 2.0


def test_cli_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from confide.cli.main import main

    out = tmp_path / "run"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "confide",
            "run",
            "calbench",
            "--lineup",
            "imap",
            "--suite",
            "tiny",
            "--condition",
            "dm",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    try:
        main()
    except SystemExit as exc:  # typer exits 0 after a successful command
        assert exc.code in (0, None)
    printed = capsys.readouterr().out
    for column in ("Setting", "Method", "Coord.", "Excess", "Msgs.", "Fair."):
        assert column in printed
    assert (out / "results.csv").exists() and (out / "summary.csv").exists()
