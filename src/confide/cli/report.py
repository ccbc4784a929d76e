"""`confide report RUN_DIR`: write the run's self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report(
    run_dir: Annotated[
        Path,
        typer.Argument(help="A run directory (holds results.csv; runs/<benchmark>: its latest "
                       "run)."),
    ],
    out: Annotated[
        Path | None, typer.Option(help="Output file (default RUN_DIR/report.html).")
    ] = None,
    viewer: Annotated[
        bool,
        typer.Option("--viewer", help="Also write the viewer bundle to RUN_DIR/view and link "
                     "the report's episodes into it."),
    ] = False,
) -> None:
    """Render the headline table, figures, experiment, notable episodes and tables of a run
    into one HTML file."""
    from confide.report import build_report  # imported here: `confide --help` stays fast
    from confide.runner.rundir import readable_run

    run_dir = readable_run(run_dir)
    if viewer:
        from confide.view import write_bundle

        for page, why in write_bundle([run_dir], run_dir / "view").skipped.items():
            typer.echo(f"left out {page}: {why}", err=True)
    typer.echo(f"wrote {build_report(run_dir, out)}")
