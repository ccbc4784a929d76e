"""Who saw what, pinned by behaviour: an event with no `visible_to` is
bookkeeping no seat observed, so neither `trace show --as` nor the viewer shows it to
anyone. Expectations are written by hand from the trace's raw lines, never from the
`visible()` the code under test calls."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from confide.core import Channel, EpisodeEnd, EpisodeStart, Postbox, TraceRecorder
from confide.core.trace import EnvEvent, ModelCall
from confide.core.trace_view import render_trace
from confide.view import Site


def _trace() -> TraceRecorder:
    recorder = TraceRecorder("ep")
    recorder.emit(EpisodeStart(episode_id="ep", benchmark="demo", scenario_id="s", seed=1))
    box = Postbox(["ann", "bob", "cy"], on_deliver=recorder.message)
    box.post("ann", Channel.dm(), to=["bob"], text="for bob only")
    recorder.emit(EnvEvent(name="bookkeeping_only", visible_to=None))
    recorder.emit(EnvEvent(name="seen_by_cy", visible_to=["cy"]))
    recorder.emit(EnvEvent(name="seen_by_all", visible_to=["ann", "bob", "cy"]))
    recorder.emit(ModelCall(seat="bob", model="mock/x", messages=[], completion={"text": "hm"}))
    recorder.finish(EpisodeEnd())
    return recorder


def test_trace_show_as_hides_events_no_seat_observed() -> None:
    trace = _trace().as_trace()
    assert "bookkeeping_only" in render_trace(trace)  # the whole trace shows it
    expected = {
        "ann": ["for bob only", "seen_by_all"],
        "bob": ["for bob only", "seen_by_all", "mock/x"],
        "cy": ["seen_by_cy", "seen_by_all"],
    }
    markers = ["for bob only", "bookkeeping_only", "seen_by_cy", "seen_by_all", "mock/x"]
    for seat, shown in expected.items():
        text = render_trace(trace, seat)
        assert [m for m in markers if m in text] == shown, seat


def _raw_events(path: Path) -> list[dict[str, Any]]:
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    return [e for e in events if e["kind"] not in ("episode_start", "episode_end")]


def _observers(raw: dict[str, Any]) -> set[str]:
    """Who observed a raw trace event, by the rule `trace show --as` documents: a message's
    sender and recipients, an env event's `visible_to` (none when null), a model call's
    seat; nobody else."""
    if raw["kind"] == "message":
        return {raw["message"]["sender"], *raw["message"]["recipients"]}
    if raw["kind"] == "env":
        return set(raw["visible_to"] or ())
    if raw["kind"] == "model_call":
        return {raw["seat"]} if raw["seat"] is not None else set()
    return set()


def test_the_viewer_shows_bookkeeping_to_no_seat(tiny_runs: dict[str, Path]) -> None:
    checked_null = 0
    for benchmark in ("calbench", "sotopia-tom", "incognita"):
        site = Site([tiny_runs[benchmark]])
        episode_id = site.runs[0].rows[0]["episode_id"]
        body = site.get(f"data/episodes/0/{episode_id}.js")[0].decode()
        episode = json.loads(body[body.index("(") + 1: body.rindex(")")])
        raw = _raw_events(tiny_runs[benchmark] / "traces" / f"{episode_id}.jsonl.gz")
        assert len(raw) == len(episode["events"])
        for event, shown in zip(raw, episode["events"], strict=True):
            seen = _observers(event)
            assert shown["seen"] == [p for p in episode["participants"] if p in seen]
            if event["kind"] == "env" and event["visible_to"] is None:
                assert shown["seen"] == []
                checked_null += 1
    assert checked_null > 0, "the tiny runs hold bookkeeping events"
