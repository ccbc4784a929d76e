"""Episode traces: typed events, an append-only JSONL writer, a reader.

A trace is one gzipped JSONL file per episode (`<id>.jsonl.gz`, read it with `zcat` or
`confide trace show`): an `episode_start` header (config, seeds, versions, scenario id),
then events, then an `episode_end` footer (status, final state, metrics and the result
rows). The writer appends to `<id>.jsonl.gz.partial` (flushed at least twice a second, each
flush a complete deflate block, so a partial file reads up to its last flush) and renames
it to `<id>.jsonl.gz` only when the footer is written (after an fsync), so a killed run
leaves at most one partial file per episode in flight and a complete file is always whole.
Compression pays: reference-protocol traces repeat each agent's rendered calendar in many
events, and gzip at level 3 shrinks them about 8x for under 2 ms per game. The reader also
takes plain JSONL (traces from earlier versions, hand-written test traces).

A model's prompt repeats the whole conversation so far, so full prompts would make a trace
grow with the square of its length. On disk a `model_call` line therefore stores only what
is new since the previous call of the same seat and purpose: `"prompt_prefix": [line,
count]` says its messages start with the first `count` messages of the call on line `line`
(1-based) of the same file, and `messages` holds the rest. `parse_events` (and so
`read_trace`, `trace show`, the replay provider and every reader built on them) restores
the full prompt; in memory a `ModelCall` always holds it.

Environment events are typed: each benchmark declares one `EnvEvent` subclass per kind
of event in its `envs/<id>/events.py` (after inspect_ai's `event` package) and lists them
in `BenchmarkSpec.events`; the reader validates every `env` line against the classes of the
benchmark named in the header (a discriminated union on `name`), so a reader matches
classes, never names, and reads typed fields, never dictionary keys. Schema version 2
introduced them (the JSON of an event is unchanged; its `data` is now validated); a trace
of schema 1 is refused with a clear error rather than read half way.

A trace never grows past what its readers accept (`confide.untrusted.MAX_BYTES`,
inflated): the writer counts the bytes of its lines, and an event that would take the
events past `EVENT_BUDGET` is refused with a `TraceError`, which ends the episode as an
error whose footer still fits. A single model reply is bounded long
before that (`llm.recorder.bounded`), so only an episode of very many huge calls meets
the budget.

Events carry `ts` (wall-clock seconds since the episode started) and model calls carry
latencies; `canonical_events` drops exactly those so two runs of a deterministic lineup
compare equal.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)
from pydantic_core import PydanticSerializationError

from confide.atomic import create_exclusive
from confide.core.message import Message
from confide.core.trusted import builder
from confide.errors import ConfideError
from confide.redaction import scrub_json_lines
from confide.untrusted import MAX_BYTES, InputError, decode, parse_json, read_bytes
from confide.untrusted import scrub as without_surrogates

SCHEMA_VERSION = 2
"""2: typed environment events (module docstring); 1: untyped `data` dictionaries."""
FLUSH_INTERVAL_S = 0.5
"""A partial trace reaches the disk at least this often (it is for watching a live
episode; a resumed run reruns partial episodes, so nothing depends on its last lines)."""
VOLATILE_KEYS = frozenset({"ts", "latency_s", "cached", "started_at", "placement"})
"""Differ between two runs of the same episode (`placement`: the host and Ray worker
that ran it)."""
TRACE_SUFFIX = ".jsonl.gz"
PROMPT_PREFIX = "prompt_prefix"
_MODEL_CALL = '"model_call"'
"""Lines holding this are decoded with json first (their prompt may be a reference)."""
COMPRESS_LEVEL = 3
_GZIP_MAGIC = b"\x1f\x8b"


FOOTER_RESERVE = 32 * 2**20
"""Bytes kept for the footer (result rows, metrics, final state: kilobytes in practice)."""
EVENT_BUDGET = MAX_BYTES - FOOTER_RESERVE
"""The most bytes of JSON lines a trace's header and events may take."""


LEGACY_SUFFIX = ".jsonl"
"""Plain traces, as runs of earlier versions wrote them."""


def trace_file(directory: Path, episode_id: str) -> Path:
    """Where the complete trace of `episode_id` lives in a run's trace directory."""
    return directory / f"{episode_id}{TRACE_SUFFIX}"


def find_trace(directory: Path, episode_id: str) -> Path:
    """The complete trace of `episode_id` as found in a run's trace directory: gzipped, or
    plain from a run of an earlier version; `trace_file` when there is neither."""
    path = trace_file(directory, episode_id)
    legacy = directory / f"{episode_id}{LEGACY_SUFFIX}"
    return legacy if not path.exists() and legacy.exists() else path


def trace_files(directory: Path) -> list[Path]:
    """Every complete trace in a run's trace directory (gzipped or plain), sorted."""
    return sorted([*directory.glob(f"*{TRACE_SUFFIX}"), *directory.glob(f"*{LEGACY_SUFFIX}")])


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
    part: str | None = None
    """The seat (as the lineup names it) or role whose spend this call is, when `seat`
    does not say it (a judge with no seat, a customer's gate call, a desk); None: `seat`."""
    retries: int = 0
    """Provider attempts retried before this call's outcome (transient errors)."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        """`part` and `retries` are left out when unset, so traces of calls that need
        neither keep their earlier bytes."""
        data = handler(self)
        if isinstance(data, dict):
            if data.get("part") is None:
                data.pop("part", None)
            if not data.get("retries"):
                data.pop("retries", None)
        return data


class EventData(BaseModel):
    """The typed payload of one kind of environment event (each event class narrows it)."""

    model_config = ConfigDict(extra="forbid")


class EnvEvent(_Event):
    """Base of the environment-specific events (phase change, decision, tool execution,
    gate release...): a benchmark subclasses it once per kind, narrowing `name` to a
    Literal and `data` to its own `EventData`. `visible_to` lists the seats that observed
    it (None = none of them, i.e. bookkeeping only), which the per-agent printer uses."""

    kind: Literal["env"] = "env"
    name: str
    seat: str | None = None
    round: int | None = None
    data: EventData = Field(default_factory=EventData)
    visible_to: list[str] | None = None

    def fields(self) -> dict[str, Any]:
        """The payload as plain JSON data (for printers that show any event)."""
        return self.data.model_dump(mode="json")

    def shown_state(self) -> dict[str, str]:
        """Private state this event showed its one viewer (e.g. a rendered calendar), by
        label, for the viewer's state panel; none unless an event class says so."""
        return {}


E = TypeVar("E", bound=BaseModel)


class ScoringStart(_Event):
    """Where play ends and scoring begins (`confide.core.scoring`): the events before it
    are the played episode, those after it what scoring did (judge calls, verdicts), done
    with the role bindings it names. `confide rescore` keeps what comes before."""

    kind: Literal["scoring"] = "scoring"
    roles: dict[str, str] = Field(default_factory=dict)


class EpisodeEnd(_Event):
    """Footer: outcome, final state, episode metrics and one result row per seat."""

    kind: Literal["episode_end"] = "episode_end"
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    final_state: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    tables: Any = Field(default=None, exclude=True)
    """The episode's `EpisodeResult.tables`, carried from the scorer to the run's output
    phase; never written to the trace (None when read back)."""
    spend: Any = Field(default=None, exclude=True)
    """What the episode spent on models by seat and role (`confide.runner.spend`), taken
    from its events by the runner for the result rows; never written to the trace."""


TraceEvent = Annotated[
    EpisodeStart | MessageDelivered | ModelCall | EnvEvent | ScoringStart | EpisodeEnd,
    Field(discriminator="kind"),
]


@functools.cache
def event_adapter(env_events: tuple[type[EnvEvent], ...] = ()) -> TypeAdapter[TraceEvent]:
    """Parses one event: a core event, or one of `env_events` chosen by its `name`."""
    members: list[Any] = [EpisodeStart, MessageDelivered, ModelCall, ScoringStart, EpisodeEnd]
    if len(env_events) == 1:
        members.append(env_events[0])
    elif env_events:
        members.append(Annotated[Union[env_events], Field(discriminator="name")])  # noqa: UP007
    union: Any = Annotated[Union[tuple(members)], Field(discriminator="kind")]  # noqa: UP007
    adapter: TypeAdapter[TraceEvent] = TypeAdapter(union)
    return adapter


def benchmark_events(benchmark: str) -> tuple[type[EnvEvent], ...]:
    """The event classes the registered benchmark `benchmark` declares (none when it is
    not registered: its traces may then hold core events only)."""
    from confide.registry import benchmark_ids, get_benchmark

    return get_benchmark(benchmark).events if benchmark in benchmark_ids() else ()


def check_schema(header: EpisodeStart, source: str) -> None:
    """Refuse a trace written with another schema version, naming the file."""
    version = header.schema_version
    if version < SCHEMA_VERSION:
        raise TraceError(
            f"{source}: written by an older confide (trace schema {version}): re-run or "
            f"rescore it with this version (which reads schema {SCHEMA_VERSION})"
        )
    if version > SCHEMA_VERSION:
        raise TraceError(
            f"{source}: written by a newer confide (trace schema {version}); this version "
            f"reads schema {SCHEMA_VERSION}: upgrade confide"
        )


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

    def of(self, kind: type[E]) -> list[E]:
        """The events of one class (e.g. an environment's `BatchApplied`), in order."""
        return [e for e in self.events if isinstance(e, kind)]

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
    """`line` as UTF-8, each lone surrogate replaced by U+FFFD (issue 12 item 7: an odd
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
        self.partial_path = self.final_path.with_name(self.final_path.name + ".partial")
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


def restore_prompt(
    raw: dict[str, Any], number: int, prompts: dict[int, list[Any]], source: str
) -> dict[str, Any]:
    """A decoded `model_call` line (line `number`) with its full prompt: its
    `prompt_prefix` reference resolved against `prompts` (line -> full prompt of the
    earlier calls, which this adds to). Errors name the file and line."""
    messages = raw.get("messages")
    reference = raw.pop(PROMPT_PREFIX, None)
    if reference is not None:
        if not (
            isinstance(reference, list) and len(reference) == 2
            and all(type(v) is int for v in reference) and isinstance(messages, list)
        ):
            raise TraceError(f"{source}:{number}: field {PROMPT_PREFIX}: expected [line, count]")
        line, count = reference
        base = prompts.get(line)
        if base is None or not 0 < count <= len(base):
            raise TraceError(
                f"{source}:{number}: field {PROMPT_PREFIX}: no earlier model call on line "
                f"{line} with {count} messages"
            )
        messages = raw["messages"] = base[:count] + messages
    if isinstance(messages, list):
        prompts[number] = messages
    return raw


def parse_events(
    lines: Iterable[str], source: str, env_events: Sequence[type[EnvEvent]] | None = None
) -> list[TraceEvent]:
    """Parse JSONL lines into events (full prompts restored); errors name the file, line,
    field and value. Environment events are read as `env_events`, by default as the
    classes of the benchmark named in the `episode_start` header (which must then come
    first and be of this SCHEMA_VERSION)."""
    events: list[TraceEvent] = []
    prompts: dict[int, list[Any]] = {}
    adapter = None if env_events is None else event_adapter(tuple(env_events))
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            if adapter is None:
                header = event_adapter().validate_json(line)
                if isinstance(header, EpisodeStart):
                    check_schema(header, source)
                    adapter = event_adapter(benchmark_events(header.benchmark))
                else:
                    adapter = event_adapter()
                events.append(header)
            elif _MODEL_CALL in line:
                raw = _decode(line, number, source)
                if raw.get("kind") == "model_call":
                    raw = restore_prompt(raw, number, prompts, source)
                events.append(adapter.validate_python(raw))
            else:
                events.append(adapter.validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "<line>"
            shown = repr(first.get("input"))
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise TraceError(
                f"{source}:{number}: field {field}: {first['msg']} (value: {shown})"
            ) from None
    return events


def _decode(line: str, number: int, source: str) -> dict[str, Any]:
    try:
        raw = parse_json(line, source, line=number)
    except InputError as exc:
        raise TraceError(str(exc)) from None
    if not isinstance(raw, dict):
        raise TraceError(f"{source}:{number}: an event must be a JSON object")
    return raw


def trace_text(path: Path | str, what: str = "trace") -> str:
    """The JSONL text of a trace file: gzipped (complete, or a `.partial` cut after its
    last flush) or plain, read through the untrusted-input rules (size limit on the file
    and on what it inflates to, UTF-8). InputError says what is wrong and where."""
    path = Path(path)
    data = read_bytes(path, what)
    if data.startswith(_GZIP_MAGIC):
        # a decompressobj, not gzip.decompress: a partial file has no trailer yet
        inflater = zlib.decompressobj(wbits=31)
        try:
            data = inflater.decompress(data, MAX_BYTES + 1)
        except zlib.error as exc:
            raise InputError(f"{path}: corrupt gzip data ({exc})") from None
        if len(data) > MAX_BYTES:
            raise InputError(f"{what} {path} inflates to more than the limit of {MAX_BYTES} bytes")
    return decode(data, str(path))


def read_trace(path: Path | str) -> Trace:
    """Read a trace file (complete or `.partial`, gzipped or plain) written with this
    SCHEMA_VERSION."""
    path = Path(path)
    try:
        text = trace_text(path)
    except InputError as exc:
        raise TraceError(str(exc)) from None
    events = parse_events(text.splitlines(), str(path))
    if not events or not isinstance(events[0], EpisodeStart):
        raise TraceError(f"{path}:1: a trace must start with an episode_start event")
    footer = events[-1] if isinstance(events[-1], EpisodeEnd) else None
    body = events[1:-1] if footer is not None else events[1:]
    return Trace.model_construct(path=str(path), header=events[0], events=body, footer=footer)


class TraceFiles(Sequence[Trace]):
    """Trace files read one at a time on access: a whole run's traces as a sequence that
    never holds more than the one being looked at (a run of 10,000 episodes stays flat)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = paths  # kept as given: a run passes a sequence that finds each path

    def __len__(self) -> int:
        return len(self.paths)

    @overload
    def __getitem__(self, index: int) -> Trace: ...

    @overload
    def __getitem__(self, index: slice) -> TraceFiles: ...

    def __getitem__(self, index: int | slice) -> Trace | TraceFiles:
        if isinstance(index, slice):
            return TraceFiles(self.paths[index])
        return read_trace(self.paths[index])

    def __iter__(self) -> Iterator[Trace]:
        return (read_trace(p) for p in self.paths)


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
