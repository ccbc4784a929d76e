"""Episode traces: typed events, an append-only JSONL writer, a reader.

A trace is one JSONL file per episode: an `episode_start` header (config, seeds, versions,
scenario id), then events, then an `episode_end` footer (status, final state, metrics and
the result rows). The writer appends to `<id>.jsonl.partial` (flushed at least twice a second) and
renames to `<id>.jsonl` only when the footer is written (after an fsync), so a killed run
leaves at most one partial file per episode in flight and a complete file is always whole.

Events carry `ts` (wall-clock seconds since the episode started) and model calls carry
latencies; `canonical_events` drops exactly those so two runs of a deterministic lineup
compare equal.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from confide.atomic import create_exclusive
from confide.core.message import Message
from confide.errors import ConfideError
from confide.redaction import scrub_json_line
from confide.untrusted import InputError, read_text

SCHEMA_VERSION = 1
FLUSH_INTERVAL_S = 0.5
"""A partial trace reaches the disk at least this often (it is for watching a live
episode; a resumed run reruns partial episodes, so nothing depends on its last lines)."""
VOLATILE_KEYS = frozenset({"ts", "latency_s", "cached", "started_at"})


class TraceError(ConfideError):
    """A trace file is missing, truncated or malformed."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ts: float = 0.0


class EpisodeStart(_Event):
    """Header: everything needed to reproduce the episode."""

    kind: Literal["episode_start"] = "episode_start"
    schema_version: int = SCHEMA_VERSION
    episode_id: str
    benchmark: str
    scenario_id: str
    seed: int
    lineup: list[str] = Field(default_factory=list)
    condition: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    fingerprint: dict[str, str] = Field(default_factory=dict)
    """Everything that determines the episode (`confide.runner.fingerprint`); a resumed
    run reuses the episode only when it is unchanged."""
    started_at: float = 0.0


class MessageDelivered(_Event):
    """A message as routed by the postbox, with its resolved recipient set."""

    kind: Literal["message"] = "message"
    message: Message


class ModelCall(_Event):
    """One prompt sent to a chat model and what came back (or the error, with its class:
    transient, validation, capability or permanent)."""

    kind: Literal["model_call"] = "model_call"
    seat: str | None = None
    purpose: str = "act"
    model: str
    messages: list[dict[str, Any]]
    config: dict[str, Any] = Field(default_factory=dict)
    completion: dict[str, Any] | None = None
    error: str | None = None
    error_class: str | None = None
    latency_s: float = 0.0
    cached: bool = False


class EnvEvent(_Event):
    """An environment-specific event (phase change, decision, tool execution, gate
    release...). `visible_to` lists the seats that observed it (None = none of them, i.e.
    bookkeeping only), which the per-agent printer uses."""

    kind: Literal["env"] = "env"
    name: str
    seat: str | None = None
    round: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    visible_to: list[str] | None = None


class EpisodeEnd(_Event):
    """Footer: outcome, final state, episode metrics and one result row per seat."""

    kind: Literal["episode_end"] = "episode_end"
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    final_state: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    rows: list[dict[str, Any]] = Field(default_factory=list)


TraceEvent = Annotated[
    EpisodeStart | MessageDelivered | ModelCall | EnvEvent | EpisodeEnd,
    Field(discriminator="kind"),
]
_EVENT_ADAPTER: TypeAdapter[TraceEvent] = TypeAdapter(TraceEvent)


class Trace(BaseModel):
    """A complete (or partial) episode as read back from disk."""

    path: str
    header: EpisodeStart
    events: list[TraceEvent]
    footer: EpisodeEnd | None

    @property
    def complete(self) -> bool:
        return self.footer is not None

    def messages(self) -> list[Message]:
        return [e.message for e in self.events if isinstance(e, MessageDelivered)]

    def env_events(self, name: str | None = None) -> list[EnvEvent]:
        return [e for e in self.events if isinstance(e, EnvEvent) and name in (None, e.name)]

    def model_calls(self) -> list[ModelCall]:
        return [e for e in self.events if isinstance(e, ModelCall)]


class TraceRecorder:
    """Keeps the events of one episode in memory and timestamps them; the base of the
    file writer, and on its own the trace used by tests and notebooks."""

    def __init__(self, episode_id: str = "memory") -> None:
        self.episode_id = episode_id
        self.events: list[TraceEvent] = []
        self.finished = False
        self._t0 = time.monotonic()

    def emit(self, event: TraceEvent) -> None:
        """Timestamp and keep one event."""
        if self.finished:
            raise TraceError(f"trace {self.episode_id} is already finished")
        # stamp in place (events are ours), bypassing pydantic's validated __setattr__
        object.__setattr__(event, "ts", round(time.monotonic() - self._t0, 6))
        self.events.append(event)
        self._write(event)

    def message(self, message: Message) -> None:
        """Postbox hook: record a delivery."""
        self.emit(MessageDelivered(message=message))

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

    def _write(self, event: TraceEvent) -> None:
        """Persist one event (nothing to do in memory)."""

    def _seal(self) -> None:
        """Make the trace final (nothing to do in memory)."""


class TraceWriter(TraceRecorder):
    """Appends events to `<dir>/<episode_id>.jsonl.partial` (one line each, flushed at
    least every FLUSH_INTERVAL_S);
    `finish` fsyncs and atomically renames it to `<episode_id>.jsonl`."""

    def __init__(self, directory: Path, episode_id: str) -> None:
        super().__init__(episode_id)
        directory.mkdir(parents=True, exist_ok=True)
        self.final_path = directory / f"{episode_id}.jsonl"
        self.partial_path = directory / f"{episode_id}.jsonl.partial"
        # a stale partial or a planted symlink is replaced, never written through
        self._file = io.TextIOWrapper(create_exclusive(self.partial_path), encoding="utf-8")
        self._flushed = time.monotonic()

    def as_trace(self) -> Trace:
        trace = super().as_trace()
        trace.path = str(self.final_path if self.finished else self.partial_path)
        return trace

    def _write(self, event: TraceEvent) -> None:
        self._file.write(scrub_json_line(event.model_dump_json()) + "\n")
        now = time.monotonic()
        if now - self._flushed >= FLUSH_INTERVAL_S:
            self._file.flush()
            self._flushed = now

    def flush(self) -> None:
        """Push buffered lines to the partial file now."""
        self._file.flush()
        self._flushed = time.monotonic()

    def _seal(self) -> None:
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self.partial_path, self.final_path)

    def abandon(self) -> None:
        """Close without completing; the partial file stays for inspection."""
        self.finished = True
        self._file.close()

    def discard(self) -> None:
        """Close and remove the partial file (a cancelled episode: a resumed run reruns it)."""
        self.abandon()
        self.partial_path.unlink(missing_ok=True)


def parse_events(lines: Iterable[str], source: str) -> list[TraceEvent]:
    """Parse JSONL lines into events; errors name the file, line, field and value."""
    events: list[TraceEvent] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append(_EVENT_ADAPTER.validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "<line>"
            shown = repr(first.get("input"))
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise TraceError(
                f"{source}:{number}: field {field}: {first['msg']} (value: {shown})"
            ) from None
    return events


def read_trace(path: Path | str) -> Trace:
    """Read a trace file (complete or `.partial`) written with this SCHEMA_VERSION."""
    path = Path(path)
    try:
        text = read_text(path, "trace")
    except InputError as exc:
        raise TraceError(str(exc)) from None
    events = parse_events(text.splitlines(), str(path))
    if not events or not isinstance(events[0], EpisodeStart):
        raise TraceError(f"{path}:1: a trace must start with an episode_start event")
    if events[0].schema_version != SCHEMA_VERSION:
        raise TraceError(
            f"{path}:1: field schema_version: unsupported value {events[0].schema_version!r} "
            f"(this version of confide reads {SCHEMA_VERSION})"
        )
    footer = events[-1] if isinstance(events[-1], EpisodeEnd) else None
    body = events[1:-1] if footer is not None else events[1:]
    return Trace(path=str(path), header=events[0], events=body, footer=footer)


def canonical_events(events: Iterable[BaseModel]) -> list[Any]:
    """Events as plain data without timestamps, latencies and cache flags, for comparing
    two runs of a deterministic lineup."""
    return [_strip(json.loads(e.model_dump_json())) for e in events]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
