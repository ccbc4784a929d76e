"""`confide view RUN_DIR...`: browse runs locally; `--bundle OUT` writes static files."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated

import typer


def view(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories.")],
    bundle: Annotated[
        Path | None,
        typer.Option(help="Write the viewer as static files to this directory and exit "
                     "(open its index.html from disk or any static host)."),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free port).")] = 0,
) -> None:
    """Browse runs: headline tables, episodes, one episode as any participant saw it."""
    from confide.view import serve, write_bundle  # imported here: `confide --help` stays fast

    if bundle is not None:
        count = write_bundle(run_dirs, bundle)
        typer.echo(f"wrote {count} files; open {bundle / 'index.html'}")
        return
    server = serve(run_dirs, port)
    server.block_on_close = False  # Ctrl-C stops at once, not after requests still in flight
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
    try:  # from the announcement on: a Ctrl-C right after it must stop cleanly too
        typer.echo(f"confide view: http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
