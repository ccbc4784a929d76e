"""`confide trace show FILE [--as AGENT] [--full]` and `confide trace list RUN_DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from confide.cli.term import HELP_MARKUP, print_table

app = typer.Typer(help="Inspect episode traces.", no_args_is_help=True,
                  rich_markup_mode=HELP_MARKUP)


@app.command("show")
def show(
    file: Annotated[Path, typer.Argument(help="A trace .jsonl.gz or .jsonl (or .partial) file.")],
    as_agent: Annotated[
        str | None,
        typer.Option("--as", help="Show only what this participant observed (any case)."),
    ] = None,
    prompts: Annotated[bool, typer.Option(help="Include full model prompts.")] = False,
    full: Annotated[
        bool, typer.Option("--full", help="Print payloads whole (default: cut at 300 chars).")
    ] = False,
) -> None:
    """Print the episode event by event."""
    from confide.core.trace import read_trace  # imported here: `confide --help` stays fast
    from confide.core.trace_view import render_trace

    typer.echo(render_trace(read_trace(file), as_agent, show_prompts=prompts, full=full))


@app.command("list")
def list_episodes(
    run_dir: Annotated[
        Path,
        typer.Argument(help="A run directory (holds results.csv; runs/<benchmark>: its latest "
                       "run)."),
    ],
    failed: Annotated[bool, typer.Option("--failed", help="Only episodes not ok.")] = False,
    where: Annotated[
        list[str] | None,
        typer.Option(help="Keep episodes where some seat row has METRIC<X (also <= > >= = "
                     "!=); repeat to combine."),
    ] = None,
) -> None:
    """List a run's episodes with their trace files."""
    from rich.table import Table

    from confide.core.trace import TRACE_SUFFIX  # imported here: `confide --help` stays fast
    from confide.runner.rundir import readable_run
    from confide.view.episodes import Where, read_episodes, select

    run_dir = readable_run(run_dir)
    wheres = [Where.parse(w) for w in where or []]
    chosen = select(read_episodes(run_dir), wheres, failed=failed)
    table = Table(title=f"{len(chosen)} episodes")
    for column in ("episode", "task", "lineup", "condition", "status"):
        table.add_column(column)
    for w in wheres:
        table.add_column(f"{w.metric} {w.op} {w.value:g}: seats", overflow="fold")
    for episode in chosen:
        shown = ["; ".join(f"{seat} {_value(v)}".strip() for seat, v in w.matching(episode))
                 for w in wheres]
        table.add_row(episode.episode_id, episode.task_id, episode.lineup, episode.condition,
                      episode.status, *shown)
    print_table(table)
    typer.echo(f"traces: {run_dir / 'traces'}/<episode>{TRACE_SUFFIX}", err=True)


def _value(v: float) -> str:
    """A metric value for a terminal: integers as they are, others to two decimals."""
    return f"{v:.0f}" if v == int(v) else f"{v:.2f}"
