"""Connections that scale: N Incognita episodes (direct condition, small budgets) against
a local OpenAI-compatible fake server that answers every request after L seconds, with
`max_connections` C for the model and more episodes at once than C, so the model's
connection pool is what limits the run.

The ideal, measured in the same run: the server counts the requests R it answered, and
a perfect pool that always has C requests in flight needs R x L / C seconds, i.e.
N / (R x L / C) episodes per second. The achieved rate is N over the time the server was
serving the run (first request in to last reply out); the runner's start-up before the
first request (preflight, loading tasks: no connection is open yet) is printed apart.
The bench prints the achieved episodes per second, its ratio to that ideal, and the most
requests the server ever saw in flight at once (which must never exceed C). Beside it: the
client's CPU per request and the load average (on a shared machine a starved client
falls short of the ideal by itself), and the ratio a client with zero overhead would
reach with these very episodes (`schedule_bound`: each episode's requests go one after
another, so the last episodes cannot keep C requests in flight).

Target: ratio >= 0.90 and peak <= C.  Usage: python bench/connections.py [--episodes 256]
[--latency 1.0] [--max-connections 64]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from confide.core.trace import ModelCall, read_trace, trace_files
from confide.llm.providers.json_instance import minimal_instance
from confide.runner import build_experiment, run_experiment

MODEL = "openai-api/fake"
TASKS = 16
"""Distinct Incognita tasks; episodes are these times repetitions."""


class SlowServer:
    """An OpenAI-shaped `/v1/chat/completions` that answers after `latency_s`, counting
    requests and the most in flight at once."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.requests = self.in_flight = self.peak = 0
        self.first = self.last = 0.0
        """When the first request arrived and the last reply left (epoch seconds)."""
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # the counts, for the bench's own process
                data = json.dumps(server.stats()).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data = json.dumps(server.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        # (run in a process of its own by `main`: the fake's threads must not take the
        # GIL or the CPU from the client being measured)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def stats(self) -> dict[str, float]:
        with self._lock:
            return {"requests": self.requests, "peak": self.peak, "first": self.first,
                    "last": self.last}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.first = self.first or time.time()
            self.requests += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(self.latency_s)
            fmt = body.get("response_format") or {}
            schema = (fmt.get("json_schema") or {}).get("schema")
            content = json.dumps(minimal_instance(schema)) if schema else "Sure."
            return {
                "id": "chatcmpl-bench", "object": "chat.completion", "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        finally:
            with self._lock:
                self.in_flight -= 1
                self.last = time.time()


def schedule_bound(counts: list[int], limit: int, at_once: int) -> float:
    """The ratio to the ideal that a client with zero overhead would reach: episodes with
    `counts` sequential requests each (in start order), `at_once` of them running, and a
    first-come first-served pool of `limit` connections. Below 1 only because the last
    episodes' requests cannot fill the pool (each waits for its previous reply)."""
    waiting = deque(range(min(at_once, len(counts))))
    left = dict(enumerate(counts))
    started, done, now, replies = len(waiting), 0, 0.0, []
    while done < len(counts):
        while len(replies) < limit and waiting:
            heapq.heappush(replies, (now + 1.0, waiting.popleft()))
        now, episode = heapq.heappop(replies)
        left[episode] -= 1
        if left[episode]:
            waiting.append(episode)
            continue
        done += 1
        if started < len(counts):
            waiting.append(started)
            started += 1
    return sum(counts) / limit / now


def episode_requests(run_dir: Path) -> list[int]:
    """Model calls per episode, from the run's traces."""
    return [
        sum(isinstance(event, ModelCall) for event in read_trace(path).events)
        for path in sorted(trace_files(run_dir / "traces"))
    ]


def serve(latency_s: float) -> None:
    """The server process: prints its port, then serves until killed."""
    server = SlowServer(latency_s)
    print(server.port, flush=True)
    threading.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--max-connections", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=0,
                        help="episodes at once (default: all of them)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return
    if args.episodes % TASKS:
        parser.error(f"--episodes must be a multiple of {TASKS}")
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(args.latency)],
        stdout=subprocess.PIPE, text=True,
    )
    assert child.stdout is not None
    base = f"http://127.0.0.1:{int(child.stdout.readline())}"
    try:
        run(args, base)
    finally:
        child.terminate()
        child.wait()


def run(args: argparse.Namespace, base: str) -> None:
    """The measured run against the server at `base`, and its report."""
    limit = args.max_connections
    with tempfile.TemporaryDirectory() as out:
        experiment = build_experiment({
            "benchmark": "incognita", "conditions": ["direct"], "limit": TASKS,
            "repetitions": args.episodes // TASKS, "output_dir": str(Path(out) / "run"),
            "lineups": [MODEL], "roles": {"customer": MODEL, "judge": MODEL},
            "options": {"max_turns": 2, "desk_steps": 1, "max_attempts": 1},
            "concurrency": args.concurrency or args.episodes,
            "model_options": {MODEL: {"base_url": f"{base}/v1", "max_connections": limit,
                                      "structured_output": "json_schema",
                                      "tool_calls": "native"}},
        })
        start, cpu = time.time(), time.process_time()
        summary = run_experiment(experiment, show_progress=False)
        wall, cpu = time.time() - start, time.process_time() - cpu
        counts = episode_requests(Path(out) / "run")
    with urllib.request.urlopen(base) as reply:
        stats = json.loads(reply.read())
    if summary.failed:
        raise SystemExit(f"{len(summary.failed)} episode(s) failed, e.g. {summary.failed[0]}")
    requests = int(stats["requests"])
    ideal_s = requests * args.latency / limit
    serving = stats["last"] - stats["first"]
    achieved, ideal = args.episodes / serving, args.episodes / ideal_s
    at_once = args.concurrency or args.episodes
    print(
        f"start-up before the first request {stats['first'] - start:.1f} s; run {wall:.1f} s; "
        f"client CPU {cpu:.1f} s in all ({1000 * cpu / requests:.1f} ms a request; load "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); "
        f"{at_once} episodes at once; a zero-overhead client would reach ratio "
        f"{schedule_bound(counts, limit, at_once):.3f} (the episodes' own tail)"
    )
    print(
        f"connections: {args.episodes} Incognita episodes, {requests} requests at "
        f"{args.latency:g} s, max_connections {limit}: {achieved:.2f} episodes/s vs ideal "
        f"{ideal:.2f} = ratio {achieved / ideal:.3f} (target >= 0.90); peak in flight "
        f"{stats['peak']} (limit {limit})"
    )


if __name__ == "__main__":
    main()
