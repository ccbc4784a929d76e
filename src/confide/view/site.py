"""The viewer as files: one function maps a site path to its bytes, so `confide view`
(a local HTTP server) and `confide view --bundle` (static files) serve the same site.

Data travels as JavaScript files that call a global function (`data/index.js`,
`data/episodes/<run>/<episode>.js`), not as JSON fetched with XHR: script tags load from
`file://`, where fetch is blocked, so the bundle works opened straight from disk.
"""

from __future__ import annotations

import json
import mimetypes
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from confide.core.trace import find_trace
from confide.errors import ConfideError
from confide.view.data import RunData, episode_details, episode_json
from confide.view.glossary import glossary_json
from confide.view.usage import run_usage

ASSETS = ("index.html", "app.js", "app.css")


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
        raise ConfideError(f"no page {path!r}")

    def _run(self, text: str) -> RunData:
        if not text.isdigit() or int(text) >= len(self.runs):
            raise ConfideError(f"no run {text!r}")
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


def write_bundle(run_dirs: Sequence[Path], out: Path) -> int:
    """Write the whole site under `out` (open out/index.html from disk); returns the number
    of files written."""
    site = Site(run_dirs)
    paths = site.paths()
    for path in paths:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(site.get(path)[0])
    return len(paths)


def serve(run_dirs: Sequence[Path], port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (port 0: any free one) for the site; call serve_forever."""
    site = Site(run_dirs)
    # the tasks behind the episode pages load while the reader is on the runs page (a
    # second for CalBench's canonical suite), not on the first episode's click
    threading.Thread(target=lambda: [run.tasks for run in site.runs], daemon=True).start()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = unquote(urlsplit(self.path).path)
            try:
                body, mime = site.get(path)
                status = 200
            except ConfideError as exc:
                body, mime, status = str(exc).encode(), "text/plain", 404
            self.send_response(status)
            self.send_header("Content-Type", f"{mime}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the terminal shows only the URL."""

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def serve_in_thread(run_dirs: Sequence[Path]) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread (for tests); returns it and its base URL."""
    server = serve(run_dirs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"
