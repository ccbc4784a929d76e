"""`confide run`: run a benchmark (by id, with options) or an experiment file."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer._click import Context, HelpFormatter
from typer.core import TyperCommand

from confide.cli.term import console, print_table
from confide.errors import ConfideError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from confide.core.benchmark import BenchmarkSpec


class RunCommand(TyperCommand):
    """`confide run`, whose `--help` after a benchmark id ends with that benchmark's
    suites, conditions, participants, roles and options (cli/describe.py)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if "--help" in args:
            first = next((a for a in args if not a.startswith("-")), None)
            ctx.meta["confide.benchmark"] = first
        return super().parse_args(ctx, args)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        target = ctx.meta.get("confide.benchmark")
        if not target or target.endswith((".yaml", ".yml")):
            return
        from confide.cli.describe import describe
        from confide.registry import get_benchmark

        text = "\n" + "\n".join(describe(get_benchmark(target))) + "\n"
        if self.rich_markup_mode is None:  # click's formatter, printed after this returns
            formatter.write(text)
        else:  # rich panels were printed already
            typer.echo(text, nl=False)


def run(
    target: Annotated[
        str,
        typer.Argument(help="A benchmark id (see `confide benchmarks`) or an experiment file."),
    ],
    suite: Annotated[
        str | None, typer.Option(help="Built-in task suite (default: the benchmark's).")
    ] = None,
    tasks: Annotated[Path | None, typer.Option(help="Task file to use instead of a suite.")] = None,
    world: Annotated[
        Path | None,
        typer.Option(help="With --tasks: the world a source benchmark's task file runs on "
                     "(e.g. a tau2 db.json or a tau-bench retail data directory)."),
    ] = None,
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
    sampling: Annotated[
        list[str] | None,
        typer.Option(help="Sampling setting WHO.FIELD=VALUE, WHO a seat, 'seats' (every "
                     "evaluated seat) or a role; FIELD temperature, top_p, max_tokens, seed "
                     "or reasoning_effort, e.g. seats.reasoning_effort=high."),
    ] = None,
    task_id: Annotated[
        list[str] | None, typer.Option(help="Run only these task ids (repeat the flag).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Run only the first N tasks.")] = None,
    repetitions: Annotated[int | None, typer.Option(help="Repetitions per task.")] = None,
    seed: Annotated[int | None, typer.Option(help="Experiment seed.")] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(help="Episodes run at once, per worker on Ray (default 4; 1 with an "
                     "embedded local/ model)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Run directory (default runs/<benchmark>/<name>, named after the "
                     "experiment; runs/<benchmark>/latest links to the latest); the same "
                     "experiment's is resumed, another experiment's refused."),
    ] = None,
    cache: Annotated[
        Path | None, typer.Option(help="On-disk model response cache directory.")
    ] = None,
    model_options: Annotated[
        list[str] | None,
        typer.Option("--model-options", help="Options of one model MODEL=KEY:VALUE[,KEY:VALUE], "
                     "e.g. openai-api/deepseek-reasoner=preset:deepseek (docs/providers.md)."),
    ] = None,
    max_connections: Annotated[
        list[str] | None,
        typer.Option("--max-connections", help="Requests of one model in flight at once, "
                     "MODEL=N, e.g. openai-api/fake=64 (default: its provider's limit)."),
    ] = None,
    price_table: Annotated[
        Path | None,
        typer.Option(help="Price table JSON (the shape of confide/llm/prices.json) instead "
                     "of the shipped one; checked before anything runs."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(help="Local backend: processes a run that calls no model plays in "
                     "(default: the usable cores; a run that calls models uses one)."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(help="local (default) or ray: episodes on Ray workers (extra `ray`)."),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(help="With --backend ray: 'auto' joins the running cluster, or host:port; "
                     "default: start a local one."),
    ] = None,
    ray_traces: Annotated[
        str | None,
        typer.Option(help="With --backend ray: auto (default; workers that see the run "
                     "directory write their traces there) or returned (every worker sends "
                     "them to this process)."),
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    fresh: Annotated[
        bool,
        typer.Option(help="Start over: move the run directory's previous run aside to "
                     "<dir>.replaced-<time> first (nothing is deleted)."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(help="Check everything and print the resolved plan; run nothing."),
    ] = False,
) -> None:
    """Run episodes, write traces, results.csv and the summary table, and print it.

    Re-running the same experiment resumes it in its directory: finished episodes are
    kept. A directory holding another experiment's run is refused (see --fresh).
    Ctrl-C or SIGTERM stops it cleanly with exit status 130. Before anything runs, the
    preflight reports every problem it can find (unknown participants, options, roles,
    strategies, providers, seat counts, missing keys or extras) in one message.
    """
    from confide.core.trace import TRACE_SUFFIX  # imported here: `--help` stays fast
    from confide.runner import build_experiment, load_experiment, run_experiment
    from confide.runner.interrupt import EXIT_CODE

    overrides: dict[str, Any] = {
        "suite": suite,
        "tasks": str(tasks) if tasks else None,
        "world": str(world) if world else None,
        "lineups": lineup or None,
        "conditions": condition or None,
        "roles": _pairs(role, "--role", parse=False) or None,
        "options": _pairs(option, "--option", parse=True) or None,
        "sampling": sampling_flags(sampling) or None,
        "task_ids": task_id or None,
        "limit": limit,
        "repetitions": repetitions,
        "seed": seed,
        "concurrency": concurrency,
        "output_dir": str(out) if out else None,
        "cache_dir": str(cache) if cache else None,
        "price_table": str(price_table) if price_table else None,
        "model_options": _model_options(model_options, max_connections) or None,
        "backend": backend,
        "workers": workers,
        "ray_address": ray_address,
        "ray_traces": ray_traces,
    }
    path = Path(target)
    if path.suffix in (".yaml", ".yml"):
        experiment = load_experiment(path, overrides, check=False)
    else:
        from confide.registry import get_benchmark  # lazily: `confide --help` stays fast

        get_benchmark(target)
        data = {k: v for k, v in overrides.items() if v is not None}
        experiment = build_experiment({"benchmark": target, **data}, check=False)
    if dry_run:  # the plan and its cost first, then the preflight's problems (exit 2)
        from confide.cli.plan import dry_run as plan_lines

        lines, error = plan_lines(experiment)
        for line in lines:
            console().print(line, soft_wrap=True, markup=False)
        if error is not None:
            raise error
        return
    try:
        summary = run_experiment(
            experiment, show_progress=progress, fresh=fresh, freeze_gc=True
        )
    except OSError as exc:  # read-only or full disk: say where, not a traceback
        where = f" ({exc.filename})" if exc.filename else ""
        raise ConfideError(
            f"cannot write the run directory {experiment.output_dir}{where}: "
            f"{exc.strerror or exc}"
        ) from None
    term = console()
    if summary.replaced is not None:
        term.print(f"the previous run in {summary.run_dir} was moved to {summary.replaced}",
                   soft_wrap=True, markup=False, highlight=False)
    from confide.core.demo import demo_line, demo_participants
    from confide.registry import get_benchmark

    spec = get_benchmark(experiment.benchmark)
    print_summary(spec, summary.table, summary.run_dir, f"{experiment.benchmark} summary", term)
    if demo := demo_participants(spec, experiment.lineups):
        term.print(f"[bold yellow]{demo_line(demo)}[/bold yellow]", soft_wrap=True)
    done = f"{summary.finished} of " if summary.interrupted else ""
    term.print(
        f"{done}{summary.episodes} episodes ({summary.skipped} resumed, "
        f"{len(summary.failed)} failed); results in {summary.run_dir}/results.csv",
        soft_wrap=True,
    )
    report = Path(summary.run_dir) / "report.html"
    if report.is_file():
        term.print(f"report: {report}", soft_wrap=True, markup=False)
    term.print(f"browse the episodes: {shlex.join(['confide', 'view', str(summary.run_dir)])}",
               soft_wrap=True, markup=False)
    for episode in summary.failed:
        trace = f"{summary.run_dir}/traces/{episode}{TRACE_SUFFIX}"
        term.print(f"[red]failed[/red] {episode}: see {trace}")
    if summary.interrupted:
        command = shlex.join(["confide", *(a for a in sys.argv[1:] if a != "--fresh")])
        term.print(
            f"[yellow]interrupted[/yellow]: {summary.finished} of {summary.episodes} episodes "
            f"finished; the outputs in {summary.run_dir} cover those. To resume, run the same "
            f"command again: {command}",
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_CODE)
    if summary.failed:
        raise typer.Exit(1)


class BenchmarksCommand(TyperCommand):
    """`confide benchmarks [ID]`: the id is read from the extra arguments, untyped, so the
    command still imports no pydantic (typer coerces every typed parameter through it)."""

    allow_extra_args = True


def benchmarks(ctx: typer.Context) -> None:
    """List the registered benchmarks with their suites, reference participants and conditions.

    Benchmarks from installed plugins are listed too; a plugin that cannot be loaded is
    named on stderr after the list (exit status 1). `confide benchmarks ID` describes one
    benchmark instead: its suites, conditions, participants, roles and options with their
    types, defaults and paper sections (what `confide run ID --help` ends with)."""
    if len(ctx.args) > 1:
        raise ConfideError(f"confide benchmarks takes at most one id, not {len(ctx.args)}")
    if ctx.args:
        from confide.cli.describe import describe
        from confide.registry import get_benchmark

        for line in describe(get_benchmark(ctx.args[0])):
            typer.echo(line)
        return
    from confide.registry import catalog

    entries, problems = catalog()
    rows = [
        {
            "id": entry.id,
            "suites": ", ".join(entry.suites),
            "participants": ", ".join(entry.participants),
            "conditions": ", ".join(c for c in entry.conditions if c) or "-",
            "description": entry.description,
        }
        for entry in entries
    ]
    print_table(render_table(rows, title="benchmarks"))
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    if problems:
        raise typer.Exit(1)


def print_summary(
    spec: BenchmarkSpec, table: list[dict[str, Any]], run_dir: Path, title: str, term: Console
) -> None:
    """The summary table beside the paper's rows (where it publishes some), without its
    spend columns, then the spend per lineup and condition (a run that called a model):
    one table of both is too wide to read in a terminal; summary.csv holds both."""
    from confide.core.published import summary_beside
    from confide.core.spend import SEAT_SPEND, SHOWN_KINDS, spend_rows

    if table:
        table = [{k: v for k, v in row.items() if k not in SEAT_SPEND} for row in table]
        shown = summary_beside(spec, table)
        title += " beside the paper's" if shown else ""
        print_table(render_table(shown or table, title=title), term)
    if spent := spend_rows(run_dir):
        title = "spend per lineup and condition"
        print_table(render_table(spent, title, numeric=SHOWN_KINDS.values()), term)


def render_table(
    rows: list[dict[str, Any]], title: str, numeric: Collection[str] = ()
) -> Table:
    """A rich table from dict rows (floats to 2 decimals; numeric columns right-aligned:
    those of numbers, and the `numeric` ones, of numbers already formatted)."""
    from rich.table import Table

    table = Table(title=title)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    for column in columns:
        right = column in numeric or all(isinstance(row.get(column), int | float) for row in rows)
        table.add_column(column, overflow="fold", justify="right" if right else "left")
    for row in rows:
        table.add_row(*(_cell(row.get(c, "")) for c in columns))
    return table


def _cell(value: Any) -> str:
    """A float to 2 decimals; a mean over no value (None: no verdict, say) as '-'."""
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def sampling_flags(items: list[str] | None) -> dict[str, dict[str, Any]]:
    """`--sampling WHO.FIELD=VALUE` flags as a `sampling` mapping (an experiment's, or
    `confide scenarios generate`'s)."""
    result: dict[str, dict[str, Any]] = {}
    for key, value in _pairs(items, "--sampling", parse=True).items():
        who, dot, name = key.rpartition(".")
        if not dot or not who:
            raise ConfideError(f"--sampling expects WHO.FIELD=VALUE, got {key}={value!r}")
        result.setdefault(who, {})[name] = value
    return result


def _model_options(
    items: list[str] | None, connections: list[str] | None
) -> dict[str, dict[str, Any]]:
    """`--model-options MODEL=KEY:VALUE,...` and `--max-connections MODEL=N` as
    per-model `model_options` entries (values read as YAML)."""
    from confide.untrusted import parse_yaml

    result: dict[str, dict[str, Any]] = {}
    for model, text in _pairs(items, "--model-options", parse=False).items():
        for field in text.split(","):
            key, sep, value = field.partition(":")
            if not sep or not key.strip():
                raise ConfideError(f"--model-options {model}: expected KEY:VALUE, got {field!r}")
            result.setdefault(model, {})[key.strip()] = parse_yaml(
                value, f"--model-options {model} {key}"
            )
    for model, value in _pairs(connections, "--max-connections", parse=True).items():
        result.setdefault(model, {})["max_connections"] = value
    return result


def _pairs(items: list[str] | None, flag: str, *, parse: bool) -> dict[str, Any]:
    from confide.untrusted import parse_yaml

    result: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfideError(f"{flag} expects KEY=VALUE, got {item!r}")
        result[key] = parse_yaml(value, f"{flag} {key}") if parse else value
    return result


run.command_class = RunCommand  # type: ignore[attr-defined]  # read by cli/lazy.Lazy.build
benchmarks.command_class = BenchmarksCommand  # type: ignore[attr-defined]
