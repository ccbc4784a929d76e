"""Terminal output that survives a pipe ("Terminal").

On a terminal, rich tables and help panels fit the window. When stdout is a pipe or a
file, nothing may be wrapped or cut: tables print as markdown with every cell whole,
plain lines are never folded, and help falls back to click's word-wrapping formatter
(typer's rich panels shorten option text with an ellipsis at 80 columns).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # rich is imported when something is printed, not with the CLI
    from rich.console import Console
    from rich.table import Table

TERMINAL = sys.stdout.isatty()
HELP_MARKUP: Literal["rich"] | None = "rich" if TERMINAL else None
"""`rich_markup_mode` for every Typer app: rich panels only on a terminal."""


def console() -> Console:
    """A stdout console; off a terminal it never folds lines."""
    from rich.console import Console

    return Console(soft_wrap=not TERMINAL)


def print_table(table: Table, out: Console | None = None) -> None:
    """Print `table` as a rich table on a terminal, else as an aligned markdown table and
    a blank line (what follows, another table's title say, is not read as its row)."""
    out = out if out is not None else console()
    if out.is_terminal:
        out.print(table)
        return
    out.print(markdown_table(table) + "\n", markup=False, highlight=False, soft_wrap=True)


def markdown_table(table: Table) -> str:
    """The table's title, header and cells as aligned markdown (multi-line cells joined
    with a space; columns justified right stay right-aligned)."""
    columns = table.columns
    grid = [[_plain(c.header) for c in columns]]
    body = [[_plain(cell) for cell in c.cells] for c in columns]
    grid += [list(row) for row in zip(*body, strict=True)] if body else []
    widths = [max(len(row[i]) for row in grid) for i in range(len(columns))]
    right = [c.justify == "right" for c in columns]

    def line(cells: list[str]) -> str:
        padded = (
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        )
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else "-" * (w + 2)
                          for w, r in zip(widths, right, strict=True)) + "|"
    lines = [line(grid[0]), rule, *(line(row) for row in grid[1:])]
    title = _plain(table.title) if table.title else ""
    return "\n".join(([f"{title}", ""] if title else []) + lines)


def _plain(cell: object) -> str:
    from rich.text import Text

    text = cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain
    return " ".join(text.split("\n")).replace("|", "\\|")
