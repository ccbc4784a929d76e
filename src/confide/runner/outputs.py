"""The derived outputs of a run directory, rebuilt from its finished episodes: results.csv,
the summary table, the spend per lineup and condition (`spend.csv`, every benchmark the
same, `runner.spend`), the benchmark's own files and the report. A run and a rescore
(`confide.runner.rescore`) both end here, so their outputs are built the same way.

A benchmark with `write_tables` gets the table rows its scorer computed for each episode,
spooled with the result rows (`EpisodeTables`): its traces are read back only for an
episode whose footer did not carry them (one reused from an earlier run)."""

from __future__ import annotations

import contextlib
import importlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from confide import atomic
from confide.core.benchmark import BenchmarkSpec
from confide.core.demo import demo_participants, mark_rows
from confide.core.published import PUBLISHED_FILE, summary_beside
from confide.core.spend import SPEND_CSV
from confide.core.trace import TraceFiles, find_trace, read_trace
from confide.llm.usage import ModelUsage
from confide.report import build_report
from confide.runner.expand import EpisodePlan
from confide.runner.results import CsvRows, ResultSpool, write_csv
from confide.runner.spend import run_spend, spend_table


def warm_outputs(spec: BenchmarkSpec) -> None:
    """Import the modules `spec`'s output hooks import only when they run
    (`BenchmarkSpec.output_imports`): called in a thread while the episodes play in
    other processes (the local pool, Ray), where it shares the cores with them, rather
    than adding most of a second to the output phase, which runs on one core. A module
    that fails to import is left to the output phase, which reports it."""
    for name in spec.output_imports:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def write_run_outputs(
    spec: BenchmarkSpec,
    run_dir: Path,
    finished: Sequence[EpisodePlan],
    results: ResultSpool,
    *,
    before_report: Callable[[Path], object] | None = None,
    usage: Mapping[str, ModelUsage] | None = None,
) -> tuple[CsvRows, list[dict[str, Any]]]:
    """Write every derived output for the `finished` episodes (in plan order, their rows
    in `results`; the traces are in `run_dir/traces`) and return (result rows, read
    lazily from results.csv, and the summary table). `before_report(run_dir)` writes more
    files for the report (a rescore's comparison with its source run). The run's spend
    totals (`spend.run_spend`, with `usage`, the run's meter, when given) go into
    run.json."""
    rows = results.rows(finished)
    write_csv(run_dir / "results.csv", rows, scrubbed=True)
    table = spec.summarize(rows) if spec.summarize is not None else []
    table = mark_rows(table, bool(demo_participants(spec, {p.lineup_text for p in finished})))
    if table:
        write_csv(run_dir / "summary.csv", table)
    spent = spend_table(rows)
    if any(row.get("episode_calls") or row.get("episode_invalid_replies") for row in spent):
        write_csv(run_dir / SPEND_CSV, spent)
    record_spend(run_dir, run_spend(spent, usage))
    if published := summary_beside(spec, table):
        write_csv(run_dir / PUBLISHED_FILE, published)
    trace_dir = run_dir / "traces"
    if spec.write_tables is not None:
        ok_plans = [p for p in finished if results.status[p.episode_id] == "ok"]
        spec.write_tables(run_dir, EpisodeTables(spec, trace_dir, ok_plans, results))
    elif spec.write_outputs is not None:
        ok = [p.episode_id for p in finished if results.status[p.episode_id] == "ok"]
        spec.write_outputs(run_dir, TraceFiles(TracePaths(trace_dir, ok)))
    if before_report is not None:
        before_report(run_dir)
    build_report(run_dir)
    return CsvRows(run_dir / "results.csv"), table


class TracePaths(Sequence[Path]):
    """The trace files of `episode_ids`, each found when looked up: a 10,000-episode run
    would otherwise hold 10,000 `Path` objects through its output phase."""

    def __init__(self, trace_dir: Path, episode_ids: Sequence[str]) -> None:
        self.trace_dir, self.episode_ids = trace_dir, episode_ids

    def __len__(self) -> int:
        return len(self.episode_ids)

    @overload
    def __getitem__(self, index: int) -> Path: ...
    @overload
    def __getitem__(self, index: slice) -> TracePaths: ...
    def __getitem__(self, index: int | slice) -> Path | TracePaths:
        if isinstance(index, slice):
            return TracePaths(self.trace_dir, self.episode_ids[index])
        return find_trace(self.trace_dir, self.episode_ids[index])


class EpisodeTables(Mapping[str, Any]):
    """Episode id -> the `EpisodeResult.tables` of each of `plans` (in their order), read
    from `results` when looked up, else computed from the episode's trace by
    `spec.tables_of`; one episode's tables in memory at a time."""

    def __init__(
        self,
        spec: BenchmarkSpec,
        trace_dir: Path,
        plans: Sequence[EpisodePlan],
        results: ResultSpool,
    ) -> None:
        self._spec, self._trace_dir, self._results = spec, trace_dir, results
        self._plans = {plan.episode_id: plan for plan in plans}

    def __len__(self) -> int:
        return len(self._plans)

    def __iter__(self) -> Iterator[str]:
        return iter(self._plans)

    def __getitem__(self, episode_id: str) -> Any:
        plan = self._plans[episode_id]
        tables = self._results.episode_tables(episode_id)
        if tables is None and self._spec.tables_of is not None:
            trace = read_trace(find_trace(self._trace_dir, episode_id))
            tables = self._spec.tables_of(plan.task, trace)
        return tables


def record_spend(run_dir: Path, spend: Mapping[str, Any]) -> None:
    """Put the run's spend totals into its run.json (when it has one), under `spend`."""
    path = run_dir / "run.json"
    if not path.is_file():
        return
    data = json.loads(path.read_text("utf-8"))
    if isinstance(data, dict):
        data["spend"] = spend
        atomic.write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")
