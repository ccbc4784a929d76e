"""`confide scenarios validate FILE...`: check Sotopia-ToM scenario files against the rules.

Registered by the main CLI with `app.add_typer(scenarios.app, name="scenarios")`. Files may
hold one scenario or a list, in the native JSON format or the paper's public generator
format. Every violation is printed as `FILE: [rule] scenario S, agent A, item I: message`.
Exit status: 0 when every scenario passes, 1 when any rule is broken, 2 when a file cannot
be read or parsed (that takes precedence, since its scenarios were not checked).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from confide.envs.infoshare.validation import validate_files

app = typer.Typer(no_args_is_help=True)


@app.callback()
def scenarios() -> None:
    """Work with Sotopia-ToM scenario files."""


@app.command("validate")
def validate(
    files: Annotated[
        list[Path], typer.Argument(help="Scenario JSON files (native or generator format).")
    ],
) -> None:
    """Report every rule violation with scenario id, agent and item."""
    reports = validate_files(files)
    scenarios = violations = unreadable = 0
    for report in reports:
        if report.error is not None:
            unreadable += 1
            typer.echo(f"error: {report.error}", err=True)
            continue
        scenarios += len(report.scenario_ids)
        violations += len(report.violations)
        for violation in report.violations:
            typer.echo(f"{report.path}: {violation.render()}")
    summary = f"{scenarios} scenario(s) checked, {violations} violation(s)"
    if unreadable:
        summary += f", {unreadable} file(s) unreadable"
    typer.echo(summary)
    if unreadable:
        raise typer.Exit(code=2)
    if violations:
        raise typer.Exit(code=1)
