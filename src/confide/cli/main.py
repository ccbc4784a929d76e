"""`confide`: the command line, a thin layer over the Python API (one module per command).

The top-level group knows its commands from a static table (`COMMANDS`) and the commands
benchmarks declare (`Declaration.commands`), and imports a command's module only when that
command runs (`cli.lazy`), so `confide --help` imports typer, the builtin benchmarks'
declarations and none of the commands, and each command pays only for its own layers. A
plugin benchmark's commands are looked up when a name is not in the table: reading the
installed distributions' entry points would cost `--help` a fifth of its time, so
`confide benchmarks ID` lists them instead of `confide --help`.

Errors caused by the user (`ConfideError`) or the machine (an `OSError` naming a file:
a read-only or full output directory) are printed as one plain sentence and exit with
status 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from typer._click import Context
from typer.core import TyperCommand, TyperGroup

from confide.cli.lazy import Lazy, LazyGroup
from confide.cli.term import HELP_MARKUP
from confide.errors import ConfideError

COMMANDS = (
    Lazy("run", "confide.cli.run:run",
         "Run episodes, write traces, results.csv and the summary table, and print it."),
    Lazy("eval", "confide.cli.eval:eval_command",
         "Run each model as the evaluated agent in every benchmark; write its profile."),
    Lazy("benchmarks", "confide.cli.run:benchmarks",
         "List the registered benchmarks with their suites, reference participants and "
         "conditions."),
    Lazy("rescore", "confide.cli.rescore:rescore",
         "Recompute every metric, results.csv, the summary and the benchmark's tables and\n"
         "figures from the run's traces, with the judge given by --role."),
    Lazy("report", "confide.cli.report:report",
         "Render the headline table, figures, experiment, notable episodes and tables of a "
         "run\ninto one HTML file."),
    Lazy("view", "confide.cli.view:view",
         "Browse runs: headline tables, episodes, one episode as any participant saw it."),
    Lazy("trace", "confide.cli.trace:app", "Inspect episode traces."),
    Lazy("models", "confide.cli.models:app", "Try chat models and list providers."),
)
"""The commands every benchmark shares, in `confide --help` order, with the first paragraph
of their help (kept equal to the command's own by tests/cli/test_cli_lazy.py)."""


def commands(*, plugins: bool = False) -> tuple[Lazy, ...]:
    """`COMMANDS`, then the commands the builtin benchmarks (and, with `plugins`, the
    plugin benchmarks) declare for themselves (`Declaration.commands`, read without
    importing a benchmark), by benchmark id; a declared name that a shared command or an
    earlier benchmark already uses is left out (`confide benchmarks ID` still lists it)."""
    from confide.registry import builtin_catalog, catalog

    table = {entry.name: entry for entry in COMMANDS}
    for declared in catalog()[0] if plugins else builtin_catalog():
        for command in declared.commands:
            table.setdefault(command.name, Lazy(command.name, command.target, command.help))
    return tuple(table.values())


class ConfideGroup(LazyGroup):
    """The `confide` group: the commands of `commands()`, each imported when it runs."""

    def entries(self) -> tuple[Lazy, ...]:
        return commands()

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, TyperCommand | TyperGroup | None, list[str]]:
        """As `LazyGroup`, after adding the plugin benchmarks' commands when the name is
        not in the table."""
        if args and args[0] not in self.commands:
            self.add_entries(commands(plugins=True))
        return super().resolve_command(ctx, args)


app = typer.Typer(
    cls=ConfideGroup,
    help="Measure how LLM agents coordinate under distributed knowledge and authority, "
    "and how much private information they leak (CalBench, Sotopia-ToM, Incognita).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=HELP_MARKUP,
)


def _version(value: bool) -> None:
    if value:
        from confide import __version__

        typer.echo(f"confide {__version__}")
        raise typer.Exit()


@app.callback()
def confide(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print confide's version and exit.", is_eager=True,
                     callback=_version),
    ] = False,
) -> None:
    """Makes `app` a group although every command comes from `COMMANDS`."""


def main() -> None:
    """Entry point with friendly errors."""
    try:
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


if __name__ == "__main__":
    main()
