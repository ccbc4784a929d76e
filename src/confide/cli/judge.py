"""`confide judge agree RUN_A RUN_B`: how closely two judges agree (Sotopia-ToM, A.12).

Registered by the main CLI with `app.add_typer(judge.app, name="judge")`. RUN_A and RUN_B
are `sotopia-tom` run directories that judged the same episodes with different judges;
for model lineups produce them with one shared response cache so the conversations are
replayed identically:

    confide run sotopia-tom --lineup openai/gpt-4o:tom-belief --cache c \
        --role judge=openai/gpt-5 --out A
    confide run sotopia-tom --lineup openai/gpt-4o:tom-belief --cache c \
        --role judge=openai-api/other --out B
    confide judge agree A B

Prints per-metric Pearson and Spearman correlations and the condition-level rank
correlation; `--json` prints the full report instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from confide.cli.scope import require_benchmark
from confide.cli.term import HELP_MARKUP, console, print_table

if TYPE_CHECKING:
    from confide.envs.sotopia_tom.outputs.agreement import AgreementReport, Correlation

app = typer.Typer(no_args_is_help=True, rich_markup_mode=HELP_MARKUP)


@app.callback()
def judge() -> None:
    """Sotopia-ToM only: judge reliability tools."""


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_report(report: AgreementReport) -> Table:
    """The correlation table of a report."""
    table = Table(
        title=f"judge agreement: {report.judge_a} vs {report.judge_b} "
        f"({report.matched} transcripts)"
    )
    for column in ("metric", "n", "pearson r", "p", "spearman rho", "p", "note"):
        table.add_column(column)

    def row(name: str, c: Correlation, *, pearson: bool = True) -> None:
        table.add_row(
            name,
            str(c.n),
            _fmt(c.pearson) if pearson else "-",
            _fmt(c.pearson_p) if pearson else "-",
            _fmt(c.spearman),
            _fmt(c.spearman_p),
            c.note or "",
        )

    for metric, correlation in report.metrics.items():
        row({"infomgmt": "InfoMgmt"}.get(metric, metric.upper()), correlation)
    row("condition ranking", report.condition_level, pearson=False)
    return table


@app.command("agree")
def agree(
    run_a: Annotated[Path, typer.Argument(help="First run directory (with results.csv).")],
    run_b: Annotated[Path, typer.Argument(help="Second run directory, other judge.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Per-metric Pearson/Spearman and condition-level rank correlation of two judges."""
    from confide.envs.sotopia_tom.outputs.agreement import agreement  # keeps `--help` fast

    require_benchmark("judge agree", "sotopia-tom", [run_a, run_b])
    report = agreement(run_a, run_b)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    out = console()
    print_table(render_report(report), out)
    skipped = []
    if report.different_transcripts:
        skipped.append(f"{len(report.different_transcripts)} with different transcripts")
    if report.only_in_a or report.only_in_b:
        skipped.append(f"{report.only_in_a} only in A, {report.only_in_b} only in B")
    if skipped:
        out.print("episodes left out: " + "; ".join(skipped))
