"""`confide`: the command line, a thin layer over the Python API (one module per command).

Errors caused by the user (`ConfideError`) or the machine (an `OSError` naming a file:
a read-only or full output directory) are printed as one plain sentence and exit with
status 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys

import typer

from confide.cli import incognita as incognita_cmd
from confide.cli import judge as judge_cmd
from confide.cli import leaderboard as leaderboard_cmd
from confide.cli import models as models_cmd
from confide.cli import report as report_cmd
from confide.cli import rescore as rescore_cmd
from confide.cli import run as run_cmd
from confide.cli import scenarios as scenarios_cmd
from confide.cli import trace as trace_cmd
from confide.cli import view as view_cmd
from confide.cli.term import HELP_MARKUP
from confide.errors import ConfideError

app = typer.Typer(
    help="Measure how LLM agents coordinate under distributed knowledge and authority, "
    "and how much private information they leak (CalBench, Sotopia-ToM, Incognita).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=HELP_MARKUP,
)
app.command("run")(run_cmd.run)
app.command("benchmarks")(run_cmd.benchmarks)
app.command("rescore")(rescore_cmd.rescore)
app.add_typer(trace_cmd.app, name="trace")
app.command("report")(report_cmd.report)
app.command("view")(view_cmd.view)
app.command("leaderboard")(leaderboard_cmd.leaderboard)
app.add_typer(models_cmd.app, name="models")
app.add_typer(scenarios_cmd.app, name="scenarios")
app.add_typer(judge_cmd.app, name="judge")
app.add_typer(incognita_cmd.app, name="incognita")


def main() -> None:
    """Entry point with friendly errors."""
    try:
        if sys.argv[1:] == ["benchmarks"]:
            _benchmarks()
        app()
    except ConfideError as exc:
        typer.secho(f"error: {exc}", err=True, fg="red")
        sys.exit(2)
    except OSError as exc:  # a read-only or full disk, a vanished directory: not a bug
        if exc.filename is None:
            raise
        typer.secho(f"error: cannot write or read {exc.filename}: {exc.strerror}", err=True,
                    fg="red")
        sys.exit(2)


def _benchmarks() -> None:
    """`confide benchmarks`, which takes no option, without typer's parsing: typer 0.29
    coerces even an absent `--help` flag through a pydantic TypeAdapter, and importing
    pydantic would double the command's start-up (issue 15 target 6)."""
    try:
        run_cmd.benchmarks()
    except typer.Exit as done:
        sys.exit(done.exit_code)
    sys.exit(0)


if __name__ == "__main__":
    main()
