"""The viewer as files: one function maps a site path to its bytes, so `confide view`
(a local HTTP server) and `confide view --bundle` (static files) serve the same site.

Data travels as JavaScript files that call a global function (`data/index.js`,
`data/episodes/<run>/<episode>.js`), not as JSON fetched with XHR: script tags load from
`file://`, where fetch is blocked, so the bundle works opened straight from disk.

What a user's run directory holds is not trusted: a trace is
served only from a regular file inside the run directory (`RunData.trace_path`), a page
that cannot be served answers a fixed 404 that echoes nothing it read, and the server
answers only requests whose `Host` names the address it bound (a DNS-rebinding page
on another name gets 421). A bundle is built in a new directory next to its target and
renamed into place, and replaces only an empty directory or an earlier bundle (marked by
`BUNDLE_MARKER`); an episode that cannot be read is left out and named.
"""

from __future__ import annotations

import json
import mimetypes
import os
import secrets
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from confide.core.trace import find_trace
from confide.errors import ConfideError
from confide.view.data import NotFound, RunData, episode_details, episode_json
from confide.view.glossary import glossary_json
from confide.view.usage import run_usage

ASSETS = ("index.html", "app.js", "app.css")
BUNDLE_MARKER = ".confide-bundle"
"""Written into every bundle: a directory holding it may be replaced by a new bundle."""
HOST = "127.0.0.1"
_BUILDING = ".confide-bundle-tmp"
"""Suffix of a bundle being built or replaced (a directory: not one of `confide.atomic`'s
file temporaries, which a run sweeps)."""


class Site:
    """The runs being viewed and the path -> content mapping."""

    def __init__(self, run_dirs: Sequence[Path]) -> None:
        if not run_dirs:
            raise ConfideError("confide view: give at least one run directory")
        self.runs = [RunData(Path(p), i) for i, p in enumerate(run_dirs)]
        for run in self.runs:
            run.rows  # noqa: B018 -- fail before serving when a directory is not a run

    def get(self, path: str) -> tuple[bytes, str]:
        """(content, mime type) of a site path such as `index.html` or
        `data/episodes/0/<id>.js`; ConfideError when there is no such page."""
        path = path.strip("/") or "index.html"
        if path in ASSETS:
            content = files("confide.view").joinpath("static", path).read_bytes()
            return content, mimetypes.guess_type(path)[0] or "application/octet-stream"
        if path == "data/index.js":
            index = {"runs": [r.summary() for r in self.runs], "glossary": glossary_json()}
            return _script("confideIndex", index), "text/javascript"
        parts = path.split("/")
        if len(parts) == 3 and parts[:2] == ["data", "usage"] and parts[2].endswith(".js"):
            run = self._run(parts[2][:-3])
            return _script("confideUsage", {"run": run.index, **run_usage(run.path)}), \
                "text/javascript"
        if len(parts) == 4 and parts[:2] == ["data", "episodes"] and parts[3].endswith(".js"):
            run = self._run(parts[2])
            return _script("confideEpisode", episode_json(run, parts[3][:-3])), "text/javascript"
        if len(parts) == 4 and parts[:2] == ["data", "details"] and parts[3].endswith(".js"):
            run = self._run(parts[2])
            return _script("confideDetails", episode_details(run, parts[3][:-3])), \
                "text/javascript"
        raise NotFound(f"no page {path!r}")

    def _run(self, text: str) -> RunData:
        if not text.isdigit() or int(text) >= len(self.runs):
            raise NotFound(f"no run {text!r}")
        return self.runs[int(text)]

    def paths(self) -> list[str]:
        """Every path of the site (what a bundle writes)."""
        episodes = [
            f"data/{part}/{run.index}/{episode_id}.js"
            for run in self.runs
            for episode_id in dict.fromkeys(r["episode_id"] for r in run.rows)
            if find_trace(run.path / "traces", episode_id).is_file()
            for part in ("episodes", "details")
        ]
        usage = [f"data/usage/{run.index}.js" for run in self.runs]
        return [*ASSETS, "data/index.js", *usage, *episodes]


def _script(callback: str, value: Any) -> bytes:
    # `</` is escaped so the payload can never close a script element it is inlined in
    text = json.dumps(value, ensure_ascii=False, default=str).replace("</", "<\\/")
    return f"{callback}({text});\n".encode()


@dataclass
class Bundle:
    """What `write_bundle` wrote: the number of files (its marker included), and each
    episode left out with why."""

    files: int
    skipped: dict[str, str] = field(default_factory=dict)


def write_bundle(run_dirs: Sequence[Path], out: Path) -> Bundle:
    """Write the whole site as a new directory `out` (open out/index.html from disk).
    `out` may be missing, an empty directory or an earlier bundle (replaced whole, so no
    stale file stays); anything else, a symlink included, is refused before any work.
    The site is built in a fresh sibling directory, then renamed into place."""
    _check_bundle_target(out)
    site = Site(run_dirs)
    out.parent.mkdir(parents=True, exist_ok=True)
    build = out.with_name(f".{out.name}.{secrets.token_hex(4)}{_BUILDING}")
    build.mkdir()
    try:
        written = Bundle(0)
        for path in site.paths():
            try:
                content = site.get(path)[0]
            except (ConfideError, OSError) as exc:  # one bad trace: leave its episode out
                written.skipped[path] = str(exc) if isinstance(exc, ConfideError) else (
                    f"{exc.filename}: {exc.strerror}")
                continue
            target = build / path
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as handle:  # a new file in a new directory
                handle.write(content)
            written.files += 1
        (build / BUNDLE_MARKER).write_text("written by confide view --bundle; a new bundle "
                                           "replaces this directory whole\n")
        written.files += 1
        _check_bundle_target(out)  # again: it may have changed while the site was built
        _replace(build, out)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return written


def _check_bundle_target(out: Path) -> None:
    if out.is_symlink():
        raise ConfideError(f"--bundle {out} is a symlink; give a real directory")
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfideError(f"--bundle {out} exists and is not a directory")
    if any(out.iterdir()) and not (out / BUNDLE_MARKER).is_file():
        raise ConfideError(
            f"--bundle {out} is not empty and holds no earlier bundle (no {BUNDLE_MARKER}); "
            "nothing was written. Give an empty or new directory."
        )


def _replace(build: Path, out: Path) -> None:
    """Move `build` to `out`; an earlier bundle (or empty directory) at `out` is moved
    away first and removed after (its links are removed, never followed)."""
    if not out.exists():
        os.rename(build, out)
        return
    old = out.with_name(f".{out.name}.{secrets.token_hex(4)}{_BUILDING}")
    os.rename(out, old)
    try:
        os.rename(build, out)
    except OSError:
        os.rename(old, out)
        raise
    shutil.rmtree(old)


def serve(run_dirs: Sequence[Path], port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (port 0: any free one) for the site; call serve_forever.
    Requests whose `Host` is not this address (127.0.0.1 or localhost with the port)
    are refused with 421."""
    site = Site(run_dirs)
    hosts: set[str] = set()
    # the tasks behind the episode pages load while the reader is on the runs page (a
    # second for CalBench's canonical suite), not on the first episode's click
    threading.Thread(target=lambda: [run.tasks for run in site.runs], daemon=True).start()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = unquote(urlsplit(self.path).path)
            if self.headers.get("Host", "").lower() not in hosts:
                body, mime, status = b"misdirected request\n", "text/plain", 421
            else:
                try:
                    body, mime = site.get(path)
                    status = 200
                except NotFound as exc:  # names only what the request named
                    body, mime, status = str(exc).encode(), "text/plain", 404
                except (ConfideError, OSError):  # fixed text: never echo what was read
                    body, mime, status = b"not found\n", "text/plain", 404
            self.send_response(status)
            self.send_header("Content-Type", f"{mime}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the terminal shows only the URL."""

    server = ThreadingHTTPServer((HOST, port), Handler)
    bound = server.server_address[1]
    hosts.update({f"{HOST}:{bound}", f"localhost:{bound}"})
    return server


def serve_in_thread(run_dirs: Sequence[Path]) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread (for tests); returns it and its base URL."""
    server = serve(run_dirs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"
