"""`confide incognita convert`: the transformation as an instrument (the Incognita paper,
contribution 3; `confide.envs.incognita.transform`).

Declared in `declaration.py` as `confide incognita` (imported when it runs).

    confide incognita convert --tasks tau2/tasks.json --world retail-data/

converts every task of a tau2-bench ``tasks.json`` (or tau-bench tasks as JSON) on its
world (a tau2 ``db.json`` or a tau-bench retail data directory), runs the reference agent
on every card in every condition with the LLM-free participants, and prints how many
converted, the reference's success per condition and the reason for every task left out.
Exit status 0 when the reference solves every card in every condition, 1 otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from confide.cli.term import HELP_MARKUP, console

app = typer.Typer(no_args_is_help=True, rich_markup_mode=HELP_MARKUP)


@app.callback()
def incognita() -> None:
    """Incognita only: convert a source benchmark's tasks into task cards."""


@app.command("convert")
def convert(
    tasks: Annotated[
        Path, typer.Option(help="tau2-bench tasks.json, or tau-bench tasks as JSON.")
    ],
    world: Annotated[
        Path, typer.Option(help="The tasks' world: a tau2 db.json or a tau-bench data dir.")
    ],
    condition: Annotated[
        list[str] | None,
        typer.Option(help="Condition(s) the reference is checked in (default: all three)."),
    ] = None,
    check: Annotated[
        bool, typer.Option(help="Run the reference agent on every card (--no-check: convert only).")
    ] = True,
) -> None:
    """Convert every task, check every card with the reference agent, print the summary."""
    import random

    from confide.envs.incognita.conditions import CONDITIONS, build_condition
    from confide.envs.incognita.conversion import check as check_cards
    from confide.envs.incognita.transform import convert_file

    conditions = condition or list(CONDITIONS)
    for name in conditions:
        build_condition(name, random.Random(0))  # an unknown name fails here, before any work
    loaded, conversions = convert_file(tasks, world)
    report = check_cards(loaded, conversions, conditions if check else ())
    term = console()
    for line in report.lines():
        term.print(line, soft_wrap=True, markup=False, highlight=False)
    if any(report.unsolved.values()):
        raise typer.Exit(1)
