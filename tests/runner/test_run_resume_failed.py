"""Resume after a failed episode.

One episode of a demo experiment fails deterministically (its model refuses every call
from seat `c`); the same experiment is then run again with the fault gone. Only the
failed episode may rerun, and results.csv, summary.csv and the failed count must describe
the repaired run. Uses only public behaviour (the same experiment run twice), so it holds
whatever the runner uses to recognise a finished episode.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from confide.llm import (
    ChatMessage,
    GenerateConfig,
    MockModel,
    ModelError,
    register_mock,
    unregister_mock,
)
from confide.runner import build_experiment, run_experiment
from confide.runner.config import Experiment
from confide.runner.results import read_csv

DOWN: set[str] = set()
"""Seats whose model calls fail (a non-transient error, so no retry rescues them)."""


def _relay_reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    seat = messages[0].content.split()[2]  # "You are <seat> in a relay game. ..."
    if seat in DOWN:
        raise ModelError(f"seat {seat} is down", model="mock/flaky-seat", kind="bad_request")
    return f"hello from {seat}"


@pytest.fixture
def flaky_seat() -> Iterator[set[str]]:
    register_mock("flaky-seat", lambda **_: MockModel(_relay_reply, name="flaky-seat"),
                  replace=True)
    DOWN.clear()
    yield DOWN
    DOWN.clear()
    unregister_mock("flaky-seat")


def _experiment(tmp_path: Path) -> Experiment:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"id": "good", "seats": ["a", "b"], "rounds": 2}) + "\n"
        + json.dumps({"id": "bad", "seats": ["c", "d"], "rounds": 3}) + "\n"
    )
    return build_experiment({
        "benchmark": "demo", "tasks": str(tasks), "lineups": ["mock/flaky-seat"],
        "output_dir": str(tmp_path / "run"),
    })


def _status(rows: list[dict[str, str]]) -> dict[str, set[str]]:
    by_task: dict[str, set[str]] = {}
    for row in rows:
        by_task.setdefault(row["task_id"], set()).add(row["status"])
    return by_task


def test_failed_episode_reruns_and_results_describe_the_repaired_run(
    tmp_path: Path, flaky_seat: set[str]
) -> None:
    exp = _experiment(tmp_path)
    run_dir = tmp_path / "run"
    flaky_seat.add("c")
    first = run_experiment(exp, show_progress=False)
    (bad_id,) = first.failed
    assert bad_id.startswith("bad__")
    assert (first.episodes, first.skipped) == (2, 0)
    rows = read_csv(run_dir / "results.csv")
    # good: one row per seat; bad: one row carrying the status and the error
    assert len(rows) == 2 + 1
    assert _status(rows) == {"good": {"ok"}, "bad": {"error"}}
    assert "seat c is down" in next(r["error"] for r in rows if r["task_id"] == "bad")
    # the summary counts only the good ring: 2 seats x 2 rounds, one message per turn
    assert read_csv(run_dir / "summary.csv") == [
        {"participant": "mock/flaky-seat", "seats": "2", "messages": "4", "invalid": "0"}
    ]
    good_trace = next((run_dir / "traces").glob("good__*.jsonl.gz")).read_bytes()

    flaky_seat.clear()
    second = run_experiment(exp, show_progress=False)
    assert (second.episodes, second.skipped, second.failed) == (2, 1, [])
    assert next((run_dir / "traces").glob("good__*.jsonl.gz")).read_bytes() == good_trace
    rows = read_csv(run_dir / "results.csv")
    assert len(rows) == 2 + 2
    assert _status(rows) == {"good": {"ok"}, "bad": {"ok"}}
    assert {r["messages"] for r in rows if r["task_id"] == "bad"} == {"3"}
    assert all(r.get("error", "") == "" for r in rows)
    # 4 seats; 2 x 2 + 2 x 3 messages
    assert read_csv(run_dir / "summary.csv") == [
        {"participant": "mock/flaky-seat", "seats": "4", "messages": "10", "invalid": "0"}
    ]

    # both episodes are now complete: bringing the fault back changes nothing
    flaky_seat.add("c")
    third = run_experiment(exp, show_progress=False)
    assert (third.skipped, third.failed) == (2, [])
    assert third.rows == second.rows
