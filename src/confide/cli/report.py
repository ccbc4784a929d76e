"""`confide report RUN_DIR`: write the run's self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (holds results.csv).")],
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

    if viewer:
        from confide.view import write_bundle

        write_bundle([run_dir], run_dir / "view")
    typer.echo(f"wrote {build_report(run_dir, out)}")
