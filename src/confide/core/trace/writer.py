"""The trace writers: `TraceRecorder` keeps an episode's events in memory (tests,
notebooks, estimates); `TraceWriter` appends them to a gzipped JSONL file on disk.

The writer appends to `<id>.jsonl.gz.partial` (flushed at least twice a second, each
flush a complete deflate block, so a partial file reads up to its last flush) and renames
it to `<id>.jsonl.gz` only when the footer is written (after an fsync), so a killed run
leaves at most one partial file per episode in flight and a complete file is always whole
(`paths.py` names both). Compression pays: reference-protocol traces repeat each agent's
rendered calendar in many events, and gzip at level 3 shrinks them about 8x for under
2 ms per game.

A model's prompt repeats the whole conversation so far, so full prompts would make a trace
grow with the square of its length. On disk a `model_call` line therefore stores only what
is new since the previous call of the same seat and purpose: `"prompt_prefix": [line,
count]` says its messages start with the first `count` messages of the call on line `line`
(1-based) of the same file, and `messages` holds the rest. The reader restores the full
prompt; in memory a `ModelCall` always holds it.

A trace never grows past what its readers accept (`confide.untrusted.MAX_BYTES`,
inflated): the writer counts the bytes of its lines, and an event that would take the
events past `EVENT_BUDGET` is refused with a `TraceError`, which ends the episode as an
error whose footer still fits. A single model reply is bounded long
before that (`llm.recorder.bounded`), so only an episode of very many huge calls meets
the budget.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from confide.atomic import create_exclusive
from confide.core.message import Message
from confide.core.trace.events import (
    PROMPT_PREFIX,
    EpisodeEnd,
    EpisodeStart,
    MessageDelivered,
    ModelCall,
    Trace,
    TraceError,
    TraceEvent,
)
from confide.core.trace.paths import partial_file, trace_file
from confide.core.trusted import builder
from confide.redaction import scrub_json_lines
from confide.untrusted import MAX_BYTES
from confide.untrusted import scrub as without_surrogates

FLUSH_INTERVAL_S = 0.5
"""A partial trace reaches the disk at least this often (it is for watching a live
episode; a resumed run reruns partial episodes, so nothing depends on its last lines)."""
COMPRESS_LEVEL = 3

FOOTER_RESERVE = 32 * 2**20
"""Bytes kept for the footer (result rows, metrics, final state: kilobytes in practice)."""
EVENT_BUDGET = MAX_BYTES - FOOTER_RESERVE
"""The most bytes of JSON lines a trace's header and events may take."""


class TraceRecorder:
    """Keeps the events of one episode in memory and timestamps them; the base of the
    file writer, and on its own the trace used by tests and notebooks."""

    def __init__(self, episode_id: str = "memory") -> None:
        self.episode_id = episode_id
        self.events: list[TraceEvent] = []
        self.finished = False
        self._t0 = time.monotonic()

    def emit(self, event: TraceEvent, *, stamp: bool = True) -> None:
        """Timestamp and keep one event. `stamp=False` keeps its own time (an event copied
        from another trace) and moves this trace's clock so later events come after it."""
        if self.finished:
            raise TraceError(f"trace {self.episode_id} is already finished")
        now = time.monotonic()
        if not stamp:
            self._t0 = min(self._t0, now - event.ts)
        else:  # in place (events are ours), bypassing pydantic's validated __setattr__
            object.__setattr__(event, "ts", round(now - self._t0, 6))
        self.events.append(event)
        self._write(event, now)

    def message(self, message: Message) -> None:
        """Postbox hook: record a delivery."""
        self.emit(builder(MessageDelivered)(message=message))

    def finish(self, footer: EpisodeEnd) -> None:
        """Record the footer and seal the trace."""
        self.emit(footer)
        self.finished = True
        self._seal()

    def as_trace(self) -> Trace:
        """The recorded events as a `Trace` (no re-parsing: they are already typed)."""
        if not self.events or not isinstance(self.events[0], EpisodeStart):
            raise TraceError(f"trace {self.episode_id} has no episode_start header")
        footer = self.events[-1] if isinstance(self.events[-1], EpisodeEnd) else None
        body = self.events[1:-1] if footer is not None else self.events[1:]
        return Trace.model_construct(
            path=self.episode_id, header=self.events[0], events=body, footer=footer
        )

    def _write(self, event: TraceEvent, now: float) -> None:
        """Persist one event, emitted at monotonic time `now` (nothing to do in memory)."""

    def _seal(self) -> None:
        """Make the trace final (nothing to do in memory)."""


def _json_line(event: BaseModel) -> bytes:
    """The event as one line of UTF-8 JSON, straight from pydantic's serializer (the bytes
    `model_dump_json` would decode). Pydantic refuses to serialize a lone surrogate (in,
    say, the text of an exception raised by a user's participant); the json module keeps
    it for `_utf8` to replace."""
    try:
        return event.__pydantic_serializer__.to_json(event)
    except PydanticSerializationError:
        return _utf8(
            json.dumps(event.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
        )


def _utf8(line: str) -> bytes:
    """`line` as UTF-8, each lone surrogate replaced by U+FFFD (an odd
    text is recorded, it never aborts the episode or the run)."""
    try:
        return line.encode()
    except UnicodeEncodeError:
        return without_surrogates(line).encode()


class TraceWriter(TraceRecorder):
    """Appends gzipped events to `<dir>/<episode_id>.jsonl.gz.partial` (one line each,
    flushed at least every FLUSH_INTERVAL_S);
    `finish` fsyncs and atomically renames it to `<episode_id>.jsonl.gz`."""

    def __init__(self, directory: Path, episode_id: str) -> None:
        super().__init__(episode_id)
        directory.mkdir(parents=True, exist_ok=True)
        self.final_path = trace_file(directory, episode_id)
        self.partial_path = partial_file(directory, episode_id)
        # a stale partial or a planted symlink is replaced, never written through
        self._raw = create_exclusive(self.partial_path)
        # no file name and mtime 0 in the header: the same events give the same bytes
        self._file = gzip.GzipFile(
            filename="", fileobj=self._raw, mode="wb", compresslevel=COMPRESS_LEVEL, mtime=0
        )
        self._pending: list[bytes] = []
        self._size = 0
        """Bytes of the lines so far (the trace's inflated size)."""
        self._prompts: dict[tuple[str | None, str], tuple[int, list[dict[str, Any]]]] = {}
        self._flushed = time.monotonic()

    def as_trace(self) -> Trace:
        trace = super().as_trace()
        trace.path = str(self.final_path if self.finished else self.partial_path)
        return trace

    def _write(self, event: TraceEvent, now: float) -> None:
        # each event is serialized as it comes (the trace holds it as it was when emitted),
        # the lines are scrubbed and compressed in batches: one call per line costs more
        # than the work itself
        line = self._model_call_line(event) if isinstance(event, ModelCall) else _json_line(event)
        self._size += len(line) + 1
        if self._size > EVENT_BUDGET and not isinstance(event, EpisodeEnd):
            self._size = EVENT_BUDGET + 1  # every later event is refused too
            raise TraceError(
                f"trace {self.episode_id}: a {event.kind} event of {len(line)} bytes would "
                f"take the trace past {EVENT_BUDGET} bytes, the most its readers accept"
            )
        self._pending.append(line)
        if now - self._flushed >= FLUSH_INTERVAL_S:
            self.flush()

    def _model_call_line(self, call: ModelCall) -> bytes:
        """The call's line with its prompt prefix by reference (module docstring) when it
        shares one with the seat's previous call for the same purpose."""
        key = (call.seat, call.purpose)
        previous = self._prompts.get(key)
        self._prompts[key] = (len(self.events), call.messages)  # its line number
        if previous is None:
            return _json_line(call)
        line, before = previous
        count = 0
        for old, new in zip(before, call.messages, strict=False):
            if old != new:
                break
            count += 1
        if count == 0:
            return _json_line(call)
        data = call.model_dump(mode="json")
        data["messages"] = data["messages"][count:]
        data[PROMPT_PREFIX] = [line, count]
        return _utf8(json.dumps(data, ensure_ascii=False, separators=(",", ":")))

    def _drain(self) -> None:
        if self._pending:
            self._pending.append(b"")
            self._file.write(scrub_json_lines(b"\n".join(self._pending)))
            self._pending.clear()

    def flush(self) -> None:
        """Push buffered lines to the partial file now."""
        self._drain()
        self._file.flush()
        self._flushed = time.monotonic()

    def _seal(self) -> None:
        self._drain()
        self._file.close()  # writes the gzip trailer; the raw file stays open
        self._raw.flush()
        os.fsync(self._raw.fileno())
        self._raw.close()
        os.replace(self.partial_path, self.final_path)

    def abandon(self) -> None:
        """Close without completing; the partial file stays for inspection."""
        self.finished = True
        self._drain()
        self._file.close()
        self._raw.close()

    def discard(self) -> None:
        """Close and remove the partial file (a cancelled episode: a resumed run reruns it)."""
        self.abandon()
        self.partial_path.unlink(missing_ok=True)
