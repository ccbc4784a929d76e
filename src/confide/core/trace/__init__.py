"""Episode traces, in four modules with one job each: `events` (the typed schema and the
`Trace` it makes up), `writer` (the in-memory recorder and the gzipped JSONL writer),
`reader` (files back into typed events) and `paths` (where trace files live and what
they are called).

A trace is one gzipped JSONL file per episode (`<id>.jsonl.gz`, read it with `zcat` or
`confide trace show`). This package re-exports the names its importers use; modules the
registry reaches (`core.benchmark`, `core.viewing`) import `events` and `writer`
directly, since this package imports the reader, which looks specs up in the registry.
"""

from confide.core.trace.events import (
    PROMPT_PREFIX,
    SCHEMA_VERSION,
    VOLATILE_KEYS,
    E,
    EnvEvent,
    EpisodeEnd,
    EpisodeStart,
    EventData,
    MessageDelivered,
    ModelCall,
    ScoringStart,
    Trace,
    TraceError,
    TraceEvent,
    canonical_events,
    event_adapter,
)
from confide.core.trace.paths import (
    LEGACY_SUFFIX,
    PARTIAL_SUFFIX,
    TRACE_SUFFIX,
    find_trace,
    partial_file,
    trace_file,
    trace_files,
)
from confide.core.trace.reader import (
    TraceFiles,
    benchmark_events,
    check_schema,
    parse_events,
    read_trace,
    restore_prompt,
    trace_text,
)
from confide.core.trace.writer import (
    COMPRESS_LEVEL,
    EVENT_BUDGET,
    FLUSH_INTERVAL_S,
    FOOTER_RESERVE,
    TraceRecorder,
    TraceWriter,
)

__all__ = [
    "COMPRESS_LEVEL",
    "EVENT_BUDGET",
    "FLUSH_INTERVAL_S",
    "FOOTER_RESERVE",
    "LEGACY_SUFFIX",
    "PARTIAL_SUFFIX",
    "PROMPT_PREFIX",
    "SCHEMA_VERSION",
    "TRACE_SUFFIX",
    "VOLATILE_KEYS",
    "E",
    "EnvEvent",
    "EpisodeEnd",
    "EpisodeStart",
    "EventData",
    "MessageDelivered",
    "ModelCall",
    "ScoringStart",
    "Trace",
    "TraceError",
    "TraceEvent",
    "TraceFiles",
    "TraceRecorder",
    "TraceWriter",
    "benchmark_events",
    "canonical_events",
    "check_schema",
    "event_adapter",
    "find_trace",
    "parse_events",
    "partial_file",
    "read_trace",
    "restore_prompt",
    "trace_file",
    "trace_files",
    "trace_text",
]
