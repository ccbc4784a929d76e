"""`confide rescore`: score a finished run again under another judge, into a new run
directory, without replaying any participant (`confide.runner.rescore`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from confide.cli.run import _pairs, print_summary, render_table
from confide.cli.term import console, print_table


def rescore(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")],
    role: Annotated[
        list[str] | None,
        typer.Option(help="Bind a score role anew, e.g. judge=openai/gpt-5 (repeatable)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="New run directory (default: <RUN_DIR>-rescored, or -2, -3...)."),
    ] = None,
) -> None:
    """Recompute every metric, results.csv, the summary and the benchmark's tables and
    figures from the run's traces, with the judge given by --role.

    The run directory is only read. The output is a new run directory whose traces hold
    the played events, the new judge's calls and verdicts, and the new scores; a failed
    episode stays failed.
    """
    from confide.registry import get_benchmark  # imported here: `--help` stays fast
    from confide.runner.rescore import rescore_run
    from confide.runner.rundir import find_run

    summary = rescore_run(find_run(run_dir), roles=_pairs(role, "--role", parse=False), out=out)
    term = console()
    print_summary(get_benchmark(summary.benchmark), summary.table, summary.run_dir,
                  "rescored summary", term)
    if summary.comparison:
        title = "agreement with the source run's scores"
        print_table(render_table(summary.comparison, title=title), term)
    term.print(
        f"{summary.rescored} episodes rescored, {summary.kept_failed} failed ones kept, "
        f"{len(summary.failed)} failed while scoring, {len(summary.not_rescored)} not "
        f"rescored; results in {summary.run_dir}/results.csv"
    )
    for episode, why in summary.not_rescored.items():
        term.print(f"[yellow]not rescored[/yellow] {episode}: {why}", soft_wrap=True,
                   markup=True, highlight=False)
    for episode, error in sorted(summary.failed.items()):
        term.print(f"[red]scoring failed[/red] {episode}: {error}", soft_wrap=True)
    if summary.failed:
        raise typer.Exit(1)
