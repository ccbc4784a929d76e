"""How much of every prompt a provider's prefix cache could serve.

Runs one episode per benchmark and condition (Sotopia-ToM: one per prompting strategy,
so every role -- act, coach, belief, plan, judge -- is called) through `confide.runner`
against a local fake OpenAI-compatible server on 127.0.0.1. The server keeps every
request body and answers it with a JSON value built from the request's own schema
(random enum choices, short non-empty strings) or, when the request offers tools, now
and then with one tool call, so episodes keep going the way a cooperative model's would.
The random choices start afresh for every episode, from the seed and the episode's
label, so runs of this bench against two trees play the same episodes wherever their
requests agree.

Each request is read as the server sees it, serialized in the order a provider renders
it (tools and response format first, then the messages, each as role, content and tool
calls). Its cached share is the longest common prefix, in characters, with any earlier
request of the same seat (any role: a provider caches per prompt, not per purpose),
divided by its length. Characters stand in for tokens: a prefix of characters is a
prefix of tokens up to the one token at the boundary. Requests are attributed to seat and
role through the episode's trace (its `model_call` events hold the same messages).

The table shows, per benchmark, seat and role: requests, characters, and the share of
characters in an already-sent prefix over all requests and over the requests after the
seat's second call (the target is at least 0.90 there), the latter twice: with the
response format's schema ahead of the messages, as OpenAI caches it (so calls with
different schemas, such as a CalBench seat's turns and its reflection check-ins, share
nothing), and without it, as servers that only constrain decoding with it (vLLM,
llama.cpp) see the prompt. Under the schema-first cache every role with its own schema
starts cold once per seat (a ToM-Belief agent's first acting call is its third call, after
the state's initialisation and first update), so a last column gives the schema-first
share after each seat and role's own second call: what caching saves once every prompt
shape of the seat is warm. Incognita episodes are cut at 30
agent turns (the issue's measured episodes had 21 to 31 requests), since the fake's
agent rarely ends one.

Usage: python bench/prompt_cache.py [--only calbench|sotopia-tom|incognita] [--seed N]
Run it against another tree with PYTHONPATH=<tree>/src (e.g. main's, for a baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import threading
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from confide.core.trace import ModelCall, read_trace, trace_files
from confide.runner import build_experiment, run_experiment

MODEL = "openai-api/fake"
ENDINGS = ("leave", "FINAL")
RUNS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "calbench",
        "dm",
        {"suite": "tiny", "conditions": ["dm"], "lineups": [f"imap,{MODEL},{MODEL}"]},
    ),
    *[
        ("sotopia-tom", strategy, {"lineups": [f"{MODEL}:{strategy}"], "roles": {"judge": MODEL}})
        for strategy in ("basic", "cot-privacy", "tom-coach", "tom-belief", "self-focused")
    ],
    *[
        (
            "incognita",
            condition,
            {
                "conditions": [condition],
                "lineups": [MODEL],
                "roles": {"customer": MODEL, "desk": MODEL, "judge": MODEL},
                "options": {"max_turns": 30},
            },
        )
        for condition in ("direct", "indirect", "social")
    ],
]


class Filler:
    """A JSON value valid against a schema, with random choices and non-empty text."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = 0

    def __call__(self, schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
        root = root or schema
        if "$ref" in schema:
            node: Any = root
            for part in schema["$ref"][2:].split("/"):
                node = node[part]
            return self(node, root)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:  # an ending choice (leave, FINAL) rarely: episodes go on
            options = [o for o in schema["enum"] if o not in ENDINGS] or schema["enum"]
            draw = self.rng.random()
            if draw < 0.03:
                return self.rng.choice(schema["enum"])
            return options[0] if draw < 0.6 else self.rng.choice(options)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
                return self(self.rng.choice(branches), root)
        if "allOf" in schema:
            return self(schema["allOf"][0], root)
        kind = schema.get("type", "object")
        kind = kind[0] if isinstance(kind, list) else kind
        if kind == "object":
            props = schema.get("properties", {})
            return {name: self(sub, root) for name, sub in props.items()}
        if kind == "array":
            items = schema.get("items", {})
            size = int(schema.get("minItems", 0))
            return [self(items, root) for _ in range(size)]
        if kind == "string":
            self.count += 1
            return f"Reply {self.count}: could you tell me more?"
        if kind == "integer":
            low, high = int(schema.get("minimum", 0)), int(schema.get("maximum", 2))
            return self.rng.randint(low, high)
        if kind == "number":
            return float(schema.get("minimum", 0.5))
        if kind == "boolean":
            return self.rng.random() < 0.5
        return None


class FakeServer:
    """`/v1/chat/completions` on 127.0.0.1: every body kept, answered from its schema."""

    def __init__(self, seed: int) -> None:
        self.requests: list[dict[str, Any]] = []
        self.seed = seed
        self.fill = Filler(random.Random(seed))
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                with server.lock:
                    server.requests.append(body)
                    reply = server.answer(body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def reseed(self, label: str) -> None:
        """Fresh random choices for the next episode, drawn from the seed and `label`: an
        episode's replies do not depend on how many draws the episodes before it took, so
        a change to one benchmark's prompts or schemas leaves the others' episodes as
        they were (and a baseline run from another tree compares like with like)."""
        self.fill = Filler(random.Random(f"{self.seed}/{label}"))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "Thank you, that helps."}
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        tools = body.get("tools") or []
        probe = [t for t in tools if t["function"]["name"] == "confide_probe"]
        if probe or (tools and self.fill.rng.random() < 0.4):
            tool = (probe or [self.fill.rng.choice(tools)])[0]["function"]
            arguments = self.fill(tool.get("parameters") or {"type": "object"})
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(self.requests)}",
                        "type": "function",
                        "function": {"name": tool["name"], "arguments": json.dumps(arguments)},
                    }
                ],
            }
        elif schema:
            message["content"] = json.dumps(self.fill(schema))
        prompt = len(serialize(body)) // 4
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 20,
                "total_tokens": prompt + 20,
            },
        }

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def serialize(body: dict[str, Any], *, schema_first: bool = True) -> str:
    """A request as a provider's cache sees it: tools, the response format (OpenAI puts the
    schema before the system message; vLLM and llama.cpp only constrain decoding with
    it, so `schema_first=False` leaves it out), then the messages."""
    fmt = body.get("response_format") if schema_first else None
    parts = [json.dumps([body.get("tools"), fmt], sort_keys=True)]
    for message in body["messages"]:
        calls = json.dumps(message.get("tool_calls"), sort_keys=True)
        parts.append(f"<{message['role']}>{message.get('content') or ''}{calls}</>")
    return "".join(parts)


def key(messages: list[dict[str, Any]]) -> str:
    """What identifies a request between the server and the trace: its message texts."""
    return json.dumps([m.get("content") or "" for m in messages])


def common(a: str, b: str) -> int:
    """The length of the common prefix of `a` and `b`."""
    n = min(len(a), len(b))
    low, high = 0, n
    while low < high:  # binary search on prefix equality (fast on long strings)
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def attribute(run_dir: Path) -> dict[str, list[tuple[str, str]]]:
    """Message key -> the (seat, purpose) of each trace call with those messages."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in trace_files(run_dir / "traces"):
        for event in read_trace(path).events:
            if isinstance(event, ModelCall):
                found[key(event.messages)].append((event.seat or "-", event.purpose))
    return found


Row = tuple[str, str, str, int, int, float, float, float, float]


def measure(server: FakeServer, start: int, run_dir: Path, bench: str) -> list[Row]:
    """Per seat and role of one run: requests, characters, prefix share (all, after the
    seat's second call with and without the schema, after the seat and role's second)."""
    owners = attribute(run_dir)
    sent: dict[str, list[str]] = defaultdict(list)
    bare: dict[str, list[str]] = defaultdict(list)
    stats: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * 9)
    for body in server.requests[start:]:
        found = owners.get(key(body["messages"]))
        if not found:  # the provider's one-off capability probe, in no trace
            stats[("-", "probe")][0] += 1
            continue
        seat, purpose = found.pop(0)
        text, plain = serialize(body), serialize(body, schema_first=False)
        shared = max((common(text, old) for old in sent[seat]), default=0)
        plain_shared = max((common(plain, old) for old in bare[seat]), default=0)
        row = stats[(seat, purpose)]
        row[0] += 1
        row[1] += len(text)
        row[2] += shared
        if len(sent[seat]) >= 2:
            row[3] += len(text)
            row[4] += shared
            row[5] += len(plain)
            row[6] += plain_shared
        if row[0] > 2:  # this call is after the seat and role's own second
            row[7] += len(text)
            row[8] += shared
        sent[seat].append(text)
        bare[seat].append(plain)
    return [
        (
            bench,
            seat,
            purpose,
            n,
            chars,
            shared / chars if chars else 0.0,
            late_shared / late if late else -1.0,
            late_plain / plain if plain else -1.0,
            warm_shared / warm if warm else -1.0,
        )
        for (seat, purpose), (
            n,
            chars,
            shared,
            late,
            late_shared,
            plain,
            late_plain,
            warm,
            warm_shared,
        ) in sorted(stats.items())
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.pop("CONFIDE_OPENAI_API_BASE_URL", None)
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake")
    server = FakeServer(args.seed)
    rows: list[Row] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for benchmark, label, fields in RUNS:
                if args.only and benchmark != args.only:
                    continue
                out = Path(tmp) / f"{benchmark}-{label}"
                experiment = build_experiment(
                    {
                        "benchmark": benchmark,
                        "limit": 1,
                        "output_dir": str(out),
                        "seed": args.seed,
                        **fields,
                        "model_options": {
                            "openai-api": {
                                "base_url": server.base_url,
                                "structured_output": "json_schema",
                            }
                        },
                    }
                )
                start = len(server.requests)
                server.reseed(f"{benchmark} {label}")
                run_experiment(experiment, show_progress=False)
                rows += measure(server, start, out, f"{benchmark} {label}")
    finally:
        server.close()
    print("prompt size in characters (a character prefix is a token prefix up to one token)")
    print(
        f"{'benchmark':<26} {'seat':<24} {'role':<11} {'calls':>5} {'chars':>9} "
        f"{'cached':>7} {'after 2nd':>9} {'no schema':>9} {'role warm':>9}"
    )
    for bench, seat, purpose, n, chars, share, late, plain, warm in rows:
        shown = " ".join(f"{v:>9.2f}" if v >= 0 else f"{'-':>9}" for v in (late, plain, warm))
        print(f"{bench:<26} {seat[:24]:<24} {purpose:<11} {n:>5} {chars:>9} {share:>7.2f} {shown}")
    for column, label in (
        (6, "schema first (OpenAI), after the seat's second call"),
        (7, "no schema (vLLM, llama.cpp), after the seat's second call"),
        (8, "schema first (OpenAI), after the seat and role's own second call"),
    ):
        measured = [r for r in rows if r[column] >= 0]
        lows = Counter(f"{r[0].split()[0]} {r[2]}" for r in measured if r[column] < 0.90)
        below = ", ".join(f"{part} ({n})" for part, n in sorted(lows.items())) or "none"
        print(
            f"{label}: {len(measured) - lows.total()} of {len(measured)} seat/roles at "
            f">= 0.90; below: {below}"
        )


if __name__ == "__main__":
    main()
