"""The derived outputs of a run directory, rebuilt from its finished episodes: results.csv,
the summary table, the benchmark's own files and the report. A run and a rescore
(`confide.runner.rescore`) both end here, so their outputs are built the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from confide.core.benchmark import BenchmarkSpec
from confide.core.trace import TraceFiles, find_trace
from confide.report import build_report
from confide.runner.expand import EpisodePlan
from confide.runner.results import CsvRows, ResultSpool, write_csv


def write_run_outputs(
    spec: BenchmarkSpec,
    run_dir: Path,
    finished: Sequence[EpisodePlan],
    results: ResultSpool,
    *,
    before_report: Callable[[Path], object] | None = None,
) -> tuple[CsvRows, list[dict[str, Any]]]:
    """Write every derived output for the `finished` episodes (in plan order, their rows
    in `results`; the traces are in `run_dir/traces`) and return (result rows, read
    lazily from results.csv, and the summary table). `before_report(run_dir)` writes more
    files for the report (a rescore's comparison with its source run)."""
    rows = results.rows(finished)
    write_csv(run_dir / "results.csv", rows)
    table = spec.summarize(rows) if spec.summarize is not None else []
    if table:
        write_csv(run_dir / "summary.csv", table)
    if spec.write_outputs is not None:
        trace_dir = run_dir / "traces"
        ok = [p for p in finished if results.status[p.episode_id] == "ok"]
        spec.write_outputs(run_dir, TraceFiles([find_trace(trace_dir, p.episode_id) for p in ok]))
    if before_report is not None:
        before_report(run_dir)
    build_report(run_dir)
    return CsvRows(run_dir / "results.csv"), table
