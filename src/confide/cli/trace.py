"""`confide trace show FILE [--as AGENT]`: print an episode, or one agent's view of it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Inspect episode traces.", no_args_is_help=True)


@app.command("show")
def show(
    file: Annotated[Path, typer.Argument(help="A trace .jsonl.gz or .jsonl (or .partial) file.")],
    as_agent: Annotated[
        str | None, typer.Option("--as", help="Show only what this agent observed.")
    ] = None,
    prompts: Annotated[bool, typer.Option(help="Include full model prompts.")] = False,
) -> None:
    """Print the episode event by event."""
    from confide.core.trace import read_trace  # imported here: `confide --help` stays fast
    from confide.core.trace_view import render_trace

    typer.echo(render_trace(read_trace(file), as_agent, show_prompts=prompts))
