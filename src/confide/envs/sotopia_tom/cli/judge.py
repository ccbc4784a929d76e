"""`confide judge agree RUN_A RUN_B`: how closely two judges agree (Sotopia-ToM, A.12).

Declared in `declaration.py` as `confide judge` (imported when it runs). RUN_A and RUN_B
are `sotopia-tom` run directories that judged the same episodes with different judges;
for model lineups produce them with one shared response cache so the conversations are
replayed identically:

    confide run sotopia-tom --lineup openai/gpt-4o:tom-belief --cache c \
        --role judge=openai/gpt-5 --out A
    confide run sotopia-tom --lineup openai/gpt-4o:tom-belief --cache c \
        --role judge=openai-api/other --out B
    confide judge agree A B

Prints per-metric Pearson and Spearman correlations and the condition-level rank
correlation; `--json` prints the full report instead. `confide rescore A --role
judge=SPEC` does the same in one step, writing the table into the rescored run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from confide.cli.scope import require_benchmark
from confide.cli.term import HELP_MARKUP, console, print_table

if TYPE_CHECKING:
    from rich.table import Table

    from confide.envs.sotopia_tom.outputs.agreement import AgreementReport

app = typer.Typer(no_args_is_help=True, rich_markup_mode=HELP_MARKUP)


@app.callback()
def judge() -> None:
    """Sotopia-ToM only: judge reliability tools."""


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_report(report: AgreementReport) -> Table:
    """The correlation table of a report (Table 6's rows, `table6_rows`)."""
    from rich.table import Table

    from confide.envs.sotopia_tom.outputs.agreement import table6_rows

    table = Table(
        title=f"judge agreement: {report.judge_a} vs {report.judge_b} "
        f"({report.matched} transcripts)"
    )
    for column in ("metric", "n", "pearson r", "p", "spearman rho", "p", "note"):
        table.add_column(column)
    for row in table6_rows(report):
        table.add_row(
            row["metric"],
            str(row["n"]),
            *(_fmt(row[k]) for k in ("pearson_r", "pearson_p", "spearman_rho", "spearman_p")),
            row["note"] or "",
        )
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
