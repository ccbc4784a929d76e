"""confide.readers: a run directory back as typed, flat rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from confide.errors import ConfideError
from confide.readers import flatten, read_results, read_summary, read_traces, typed_rows
from confide.runner import build_experiment, run_experiment


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("readers") / "run"
    run_experiment(
        build_experiment({"benchmark": "demo", "output_dir": str(out)}), show_progress=False
    )
    return out


def test_results_are_typed_rows(demo_run: Path) -> None:
    rows = read_results(demo_run)
    assert len(rows) == 3 + 4 + 2  # one row per seat of the demo's three rings
    ring = [r for r in rows if r["task_id"] == "ring-4x3"]
    assert {r["messages"] for r in ring} == {3}  # an int, not "3"
    assert all(isinstance(r["seed"], int) and isinstance(r["episode_id"], str) for r in rows)
    summary = read_summary(demo_run)
    assert summary == [{"participant": "scripted", "seats": 9, "messages": 26, "invalid": 0}]


def test_rows_load_into_pandas(demo_run: Path) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(read_results(demo_run))
    assert frame.groupby("task_id")["messages"].sum().to_dict() == {
        "ring-2x4": 8, "ring-3x2": 6, "ring-4x3": 12,
    }


def test_trace_rows_one_per_event(demo_run: Path) -> None:
    messages = read_traces(demo_run, kinds={"message"})
    assert len(messages) == 3 * 2 + 4 * 3 + 2 * 4  # each seat sends one a round
    first = messages[0]
    assert first["kind"] == "message" and first["event_index"] >= 1
    assert {"episode_id", "scenario_id", "message.sender", "message.text"} <= set(first)
    everything = read_traces(demo_run)
    starts = [r for r in everything if r["kind"] == "episode_start"]
    ends = [r for r in everything if r["kind"] == "episode_end"]
    assert len(starts) == len(ends) == 3
    assert all(r["event_index"] == 0 for r in starts)


def test_columns_are_typed_together() -> None:
    rows = typed_rows([
        {"episode_id": "0123", "n": "1", "x": "1", "ok": "True", "s": "a", "e": ""},
        {"episode_id": "abcd", "n": "2", "x": "2.5", "ok": "", "s": "1", "e": ""},
    ])
    assert rows == [
        {"episode_id": "0123", "n": 1, "x": 1.0, "ok": True, "s": "a", "e": None},
        {"episode_id": "abcd", "n": 2, "x": 2.5, "ok": None, "s": "1", "e": None},
    ]


def test_flatten_and_clear_errors(tmp_path: Path) -> None:
    assert flatten({"a": {"b": 1, "c": {"d": [1]}}, "e": {}}) == {"a.b": 1, "a.c.d": [1], "e": {}}
    with pytest.raises(ConfideError, match=r"results\.csv: no such table"):
        read_results(tmp_path)
    with pytest.raises(ConfideError, match="no traces directory"):
        read_traces(tmp_path)
