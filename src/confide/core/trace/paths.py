"""Where a run's traces live and what they are called: every path and name rule of the
trace files in one place (the local writer, the Ray driver and every reader use it).

A complete trace is `<dir>/<episode id>.jsonl.gz`; while its episode runs it is written as
`<dir>/<episode id>.jsonl.gz.partial` and renamed into place only when complete, so a
killed run leaves at most one partial file per episode in flight. Runs of earlier versions
wrote plain `<episode id>.jsonl` files, which are still found and read.
"""

from __future__ import annotations

from pathlib import Path

TRACE_SUFFIX = ".jsonl.gz"
PARTIAL_SUFFIX = ".partial"
"""Appended to a trace's name while its episode is still being written."""
LEGACY_SUFFIX = ".jsonl"
"""Plain traces, as runs of earlier versions wrote them."""


def trace_file(directory: Path, episode_id: str) -> Path:
    """Where the complete trace of `episode_id` lives in a run's trace directory."""
    return directory / f"{episode_id}{TRACE_SUFFIX}"


def partial_file(directory: Path, episode_id: str) -> Path:
    """Where the trace of `episode_id` is written until it is complete."""
    final = trace_file(directory, episode_id)
    return final.with_name(final.name + PARTIAL_SUFFIX)


def find_trace(directory: Path, episode_id: str) -> Path:
    """The complete trace of `episode_id` as found in a run's trace directory: gzipped, or
    plain from a run of an earlier version; `trace_file` when there is neither."""
    path = trace_file(directory, episode_id)
    legacy = directory / f"{episode_id}{LEGACY_SUFFIX}"
    return legacy if not path.exists() and legacy.exists() else path


def trace_files(directory: Path) -> list[Path]:
    """Every complete trace in a run's trace directory (gzipped or plain), sorted."""
    return sorted([*directory.glob(f"*{TRACE_SUFFIX}"), *directory.glob(f"*{LEGACY_SUFFIX}")])
