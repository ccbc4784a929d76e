"""`confide run`: run a benchmark (by id, with options) or an experiment file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.table import Table

from confide.errors import ConfideError
from confide.registry import CATALOG, get_benchmark


def run(
    target: Annotated[
        str,
        typer.Argument(help="A benchmark id (see `confide benchmarks`) or an experiment file."),
    ],
    suite: Annotated[
        str | None, typer.Option(help="Built-in task suite (default: the benchmark's).")
    ] = None,
    tasks: Annotated[Path | None, typer.Option(help="Task file to use instead of a suite.")] = None,
    lineup: Annotated[
        list[str] | None,
        typer.Option(help="Seat specs: one for all seats or comma-separated per seat, e.g. "
                     "'imap' or 'openai/gpt-5-mini,imap,imap'. Repeat to compare lineups."),
    ] = None,
    condition: Annotated[
        list[str] | None, typer.Option(help="Condition(s) to run (default: all).")
    ] = None,
    role: Annotated[
        list[str] | None, typer.Option(help="Bind a non-evaluated role: judge=mock/json.")
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option(help="Environment option KEY=VALUE (YAML value).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Run only the first N tasks.")] = None,
    repetitions: Annotated[int | None, typer.Option(help="Repetitions per task.")] = None,
    seed: Annotated[int | None, typer.Option(help="Experiment seed.")] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(help="Episodes run at once (default 4; 1 with an embedded local/ model)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Run directory (default runs/<benchmark>); an existing one is resumed."),
    ] = None,
    cache: Annotated[
        Path | None, typer.Option(help="On-disk model response cache directory.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Run episodes, write traces, results.csv and the summary table, and print it.

    Re-running into the same --out directory resumes: finished episodes are kept.
    """
    from confide.core.trace import TRACE_SUFFIX  # imported here: `--help` stays fast
    from confide.runner import build_experiment, load_experiment, run_experiment

    overrides: dict[str, Any] = {
        "suite": suite,
        "tasks": str(tasks) if tasks else None,
        "lineups": lineup or None,
        "conditions": condition or None,
        "roles": _pairs(role, "--role", parse=False) or None,
        "options": _pairs(option, "--option", parse=True) or None,
        "limit": limit,
        "repetitions": repetitions,
        "seed": seed,
        "concurrency": concurrency,
        "output_dir": str(out) if out else None,
        "cache_dir": str(cache) if cache else None,
    }
    path = Path(target)
    if path.suffix in (".yaml", ".yml"):
        experiment = load_experiment(path, overrides)
    else:
        get_benchmark(target)
        data = {k: v for k, v in overrides.items() if v is not None}
        data.setdefault("output_dir", f"runs/{target}")
        experiment = build_experiment({"benchmark": target, **data})
    summary = run_experiment(experiment, show_progress=progress)
    console = Console()
    if summary.table:
        console.print(render_table(summary.table, title=f"{experiment.benchmark} summary"))
    console.print(
        f"{summary.episodes} episodes ({summary.skipped} resumed, {len(summary.failed)} failed); "
        f"results in {summary.run_dir}/results.csv"
    )
    for episode in summary.failed:
        trace = f"{summary.run_dir}/traces/{episode}{TRACE_SUFFIX}"
        console.print(f"[red]failed[/red] {episode}: see {trace}")
    if summary.failed:
        raise typer.Exit(1)


def benchmarks() -> None:
    """List the registered benchmarks with their suites, reference participants and conditions."""
    rows = [
        {
            "id": entry.id,
            "suites": ", ".join(entry.suites),
            "references": ", ".join(entry.references),
            "conditions": ", ".join(c for c in entry.conditions if c) or "-",
            "description": entry.description,
        }
        for entry in CATALOG
    ]
    Console().print(render_table(rows, title="benchmarks"))


def render_table(rows: list[dict[str, Any]], title: str) -> Table:
    """A rich table from dict rows (floats to 3 decimals)."""
    table = Table(title=title)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(c, "")) for c in columns))
    return table


def _cell(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _pairs(items: list[str] | None, flag: str, *, parse: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfideError(f"{flag} expects KEY=VALUE, got {item!r}")
        result[key] = yaml.safe_load(value) if parse else value
    return result
