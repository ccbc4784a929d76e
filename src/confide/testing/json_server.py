"""A JSON `POST` endpoint on 127.0.0.1, served in daemon threads: the HTTP plumbing of the
local fakes of model providers that the tests and benches run confide against (no network,
no key), written once so each fake only says how it answers a request. It lives in the
package, not in tests/, because the benches (run as `PYTHONPATH=src python bench/...`)
use it too."""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class JsonServer(ABC):
    """Serves `respond` until `close` (`BodyJsonServer`: a fake whose replies depend on
    the body alone)."""

    protocol_version: ClassVar[str] = "HTTP/1.0"
    """`HTTP/1.1` keeps connections alive, as the hosted APIs do."""
    api_root: ClassVar[str] = "/v1"
    """The path `base_url` ends with (a client's base URL, as the provider documents it)."""

    def __init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = server.protocol_version

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                status, reply, headers = server.respond(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{self.api_root}"

    @abstractmethod
    def respond(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Status, JSON reply and extra response headers for one request (`headers`
        lower-cased)."""

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class BodyJsonServer(JsonServer):
    """A `JsonServer` whose replies depend on the request body alone (`answer`)."""

    def respond(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, reply = self.answer(body)
        return status, reply, {}

    @abstractmethod
    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and JSON reply for one request body."""
