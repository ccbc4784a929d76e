"""`confide view RUN_DIR...`: browse runs locally; `--bundle OUT` writes static files."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated

import typer

from confide.errors import ConfideError


def view(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(help="One or more run directories (runs/<benchmark>: its latest run)."),
    ],
    bundle: Annotated[
        Path | None,
        typer.Option(help="Write the viewer as static files to this directory and exit "
                     "(open its index.html from disk or any static host). It must be new, "
                     "empty or an earlier bundle, which is replaced whole."),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free port).")] = 0,
) -> None:
    """Browse runs: headline tables, episodes, one episode as any participant saw it."""
    from confide.runner.rundir import readable_run  # imported here: `--help` stays fast
    from confide.view import serve, write_bundle

    runs = [readable_run(path) for path in run_dirs]
    if bundle is not None:
        written = write_bundle(runs, bundle)
        for page, why in written.skipped.items():
            typer.echo(f"left out {page}: {why}", err=True)
        typer.echo(f"wrote {written.files} files; open {bundle / 'index.html'}")
        return
    if not 0 <= port <= 65535:
        raise ConfideError(f"--port {port} is not a port number (0 to 65535; 0: any free port)")
    try:
        server = serve(runs, port)
    except OSError as exc:
        raise ConfideError(f"--port {port}: cannot listen on 127.0.0.1:{port}: "
                           f"{exc.strerror or exc}") from None
    server.block_on_close = False  # Ctrl-C stops at once, not after requests still in flight
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
    try:  # from the announcement on: a Ctrl-C right after it must stop cleanly too
        typer.echo(f"confide view: http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
