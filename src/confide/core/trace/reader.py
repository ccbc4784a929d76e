"""The trace reader: a trace file (complete or `.partial`, gzipped or plain JSONL) back
into typed events, read through the untrusted-input rules.

`parse_events` restores each `model_call`'s full prompt from its `prompt_prefix`
reference (`writer.py` says why lines store them) and validates every `env` line against
the event classes of the benchmark named in the header, which it looks up in the registry:
the one part of the trace package that knows about specs. The reader also takes plain
JSONL (traces from earlier versions, hand-written test traces).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from pydantic import ValidationError

from confide.core.trace.events import (
    PROMPT_PREFIX,
    SCHEMA_VERSION,
    EnvEvent,
    EpisodeEnd,
    EpisodeStart,
    Trace,
    TraceError,
    TraceEvent,
    event_adapter,
)
from confide.registry import benchmark_ids, get_benchmark
from confide.untrusted import MAX_BYTES, InputError, decode, parse_json, read_bytes

_MODEL_CALL = '"model_call"'
"""Lines holding this are decoded with json first (their prompt may be a reference)."""
_GZIP_MAGIC = b"\x1f\x8b"


def benchmark_events(benchmark: str) -> tuple[type[EnvEvent], ...]:
    """The event classes the registered benchmark `benchmark` declares (none when it is
    not registered: its traces may then hold core events only)."""
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
            isinstance(reference, list)
            and len(reference) == 2
            and all(type(v) is int for v in reference)
            and isinstance(messages, list)
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
