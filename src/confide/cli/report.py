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
) -> None:
    """Render tables, figures and trace links of a run into one HTML file."""
    from confide.report import build_report  # imported here: `confide --help` stays fast

    typer.echo(f"wrote {build_report(run_dir, out)}")
