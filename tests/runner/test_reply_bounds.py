"""Bounded traces: a model that answers 10 MB of non-JSON text made a
CalBench trace of 1.07 GB that `trace show`, `view` and `rescore` refused, and a resume
re-ran the finished episode. A reply over `MAX_REPLY_CHARS` is now kept as its head, its
size and its SHA-256, and counted as an invalid reply; the trace writer refuses to grow a
trace past what its readers accept."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.core.trace import (
    EpisodeEnd,
    EpisodeStart,
    MessageDelivered,
    TraceError,
    TraceWriter,
    read_trace,
    trace_text,
)
from confide.envs.calbench.events import InvalidResponse
from confide.llm import MockModel, register_mock, unregister_mock
from confide.llm.recorder import KEPT_CHARS, MAX_REPLY_CHARS, bounded
from confide.llm.structured import parse_reply
from confide.llm.types import Completion, ToolCall
from confide.runner import build_experiment, run_experiment

HUGE = "x" * (10 * 2**20)


@pytest.fixture
def huge_model() -> Iterator[None]:
    register_mock("huge", lambda **_: MockModel(lambda m, c: HUGE, name="huge"), replace=True)
    yield
    unregister_mock("huge")


def test_a_10_mb_reply_makes_a_small_readable_trace_and_is_not_rerun(
    tmp_path: Path, huge_model: None
) -> None:
    run_dir = tmp_path / "run"
    experiment = build_experiment({
        "benchmark": "calbench", "suite": "tiny", "limit": 1, "conditions": ["dm"],
        "lineups": ["imap,mock/huge,imap"], "output_dir": str(run_dir),
    })
    first = run_experiment(experiment, show_progress=False)
    assert first.failed == []
    (path,) = (run_dir / "traces").glob("*.jsonl.gz")
    assert path.stat().st_size < 200_000
    assert len(trace_text(path)) < 2_000_000  # inflated
    trace = read_trace(path)
    assert trace.footer is not None and trace.footer.status == "ok"
    calls = trace.model_calls()
    digest = hashlib.sha256(HUGE.encode()).hexdigest()
    assert calls and all(
        c.completion is not None
        and c.completion["cut"] == {"chars": len(HUGE), "sha256": digest}
        and c.completion["text"] == HUGE[:KEPT_CHARS]
        for c in calls
    )
    invalid = trace.of(InvalidResponse)
    assert invalid and all(
        all("10485760 characters long" in (p or "") for p in e.data.problems) for e in invalid
    )

    runner = CliRunner()
    shown = runner.invoke(app, ["trace", "show", str(path)])
    assert shown.exit_code == 0, shown.output
    rescored = runner.invoke(app, ["rescore", str(run_dir), "--out", str(tmp_path / "re")])
    assert rescored.exit_code == 0, rescored.output
    assert read_trace(next((tmp_path / "re" / "traces").glob("*.jsonl.gz"))).footer is not None

    before = path.read_bytes()
    again = run_experiment(experiment, show_progress=False)
    assert (again.skipped, again.failed) == (1, [])
    assert path.read_bytes() == before


def test_bounded_keeps_the_head_the_size_and_the_hash() -> None:
    small = Completion(model="m", text="y" * MAX_REPLY_CHARS)
    assert bounded(small) is small
    args = '{"a": "' + "z" * MAX_REPLY_CHARS + '"}'
    called = Completion(model="m", text="hello", tool_calls=[ToolCall(id="1", name="f",
                                                                      arguments=args)])
    cut = bounded(called)
    expected = hashlib.sha256(b"hello\0f\0" + args.encode()).hexdigest()
    assert cut.cut is not None and (cut.cut.chars, cut.cut.sha256) == (6 + len(args), expected)
    assert (cut.text, cut.tool_calls) == ("hello", [])
    assert bounded(cut) == cut
    problem = parse_reply(cut, Completion)
    assert problem == f"your reply was {6 + len(args)} characters long, over the limit of " \
        f"{MAX_REPLY_CHARS}"
    assert "cut" not in small.model_dump()  # replies under the limit dump as before


def test_the_writer_refuses_to_grow_a_trace_past_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from confide.core.message import Channel, Message
    from confide.core.trace import writer as trace_writer

    monkeypatch.setattr(trace_writer, "EVENT_BUDGET", 3000)
    writer = TraceWriter(tmp_path, "ep")
    writer.emit(EpisodeStart(episode_id="ep", benchmark="demo", scenario_id="t", seed=0))
    message = Message(sender="a", text="w" * 1000, channel=Channel.dm())
    writer.emit(MessageDelivered(message=message))
    with pytest.raises(TraceError, match="past 3000 bytes"):
        for _ in range(3):
            writer.emit(MessageDelivered(message=message))
    with pytest.raises(TraceError):  # and every event after it
        writer.emit(MessageDelivered(message=Message(sender="a", text="w", channel=Channel.dm())))
    writer.finish(EpisodeEnd(status="error", error="too big"))
    trace = read_trace(tmp_path / "ep.jsonl.gz")
    assert trace.footer is not None and trace.footer.status == "error"
    assert len(trace.messages()) == 2
