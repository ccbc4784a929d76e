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

The headline is the share of characters in an already-sent prefix over the requests
after the seat's second call, with the response format's schema serialized ahead of the
messages ("after 2nd"; the target is at least 0.90). Schema first, because that is what
the hosted providers cache: OpenAI's prompt-caching guide lists the structured-output
schema as "a prefix to the system message" and tools as part of the cached prefix, so a
request whose schema differs from an earlier one's matches nothing of it (not even an
identical system message), and confide's Anthropic provider sends the schema as the input
schema of a forced `confide_reply` tool, which Anthropic renders ahead of the system
prompt. The seat's second call, because that is the issue's measure ("after a seat's
second call"): every call counts from the third on, whatever its role, as every call is
paid. Other columns explain a row:

- "cached": the same share over all of the seat and role's requests;
- "1st tries": the headline over first attempts only. The fake does not read prompts, so
  some replies fail validation and `generate_structured` repairs them; a repair turn is
  the failed attempt plus two messages and shares all of it, which lifts a row. The
  Sotopia-ToM judge is the case: the fake fills every key of its keyed reply schema, the
  judge takes only the asked metric's, so each metric takes three attempts ("fix": the
  repair turns). A model that answers at its first attempt sees the "1st tries" share;
- "new fmt": the part of the headline's characters in requests whose response format
  the seat had not sent before. By the rule above they are cold whatever the order of
  their messages: a stateful Sotopia-ToM seat's first acting call, after state calls
  whose schema is the state's, and a CalBench seat's first check-in after its second
  call. A seat whose calls alternate between two schemas also shares, in each call, only
  the prefix of its last call with the same schema: a CalBench check-in (F.3's
  per-target, per-slot answer has its own schema) reads the round's turns, sent under the
  turns' schema, afresh. One schema per seat would warm both, but change both reply
  formats (the turn's `{thinking, actions}` envelope would have to admit the check-in's
  answer, and a constrained decoder would then make a check-in write the envelope's
  reasoning before its answer) and what schema-driven mocks (`mock/json`) answer;
- "no schema": the headline without the schema, as vLLM's and llama.cpp's prefix caches
  see a request (the schema only constrains decoding there): calls with different
  schemas then share their messages' prefix, while calls with the same schema lose it
  from the shared part;
- "role warm": schema first, after the seat and role's own second call: what caching
  saves once every prompt shape of the seat is warm.

Not modelled, so a share is not a provider's `cached_tokens`: OpenAI caches only prompts
of 1,024 tokens or more, in steps of 128 tokens, and drops a prefix after minutes without
use (a real cache serves less), while it serves a prefix to any request of the account,
not only to the seat that sent it (more, where seats share one: CalBench's system prompts
share their first sections). The fake's replies are one short sentence, so histories and
transcripts grow more slowly than a real model's, and what each call adds (new messages,
counters, a state, a metric's checklist) weighs more than in a real episode. Incognita
episodes are cut at 30 agent turns (the issue's measured episodes had 21 to 31
requests), since the fake's agent rarely ends one.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confide.core.trace import ModelCall, read_trace, trace_files
from confide.runner import build_experiment, run_experiment
from confide.testing.json_server import BodyJsonServer

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


class FakeServer(BodyJsonServer):
    """`/v1/chat/completions` on 127.0.0.1: every body kept, answered from its schema."""

    def __init__(self, seed: int) -> None:
        self.requests: list[dict[str, Any]] = []
        self.seed = seed
        self.fill = Filler(random.Random(seed))
        self.lock = threading.Lock()
        super().__init__()

    def respond(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self.lock:
            self.requests.append(body)
            return super().respond(path, headers, body)

    def reseed(self, label: str) -> None:
        """Fresh random choices for the next episode, drawn from the seed and `label`: an
        episode's replies do not depend on how many draws the episodes before it took, so
        a change to one benchmark's prompts or schemas leaves the others' episodes as
        they were (and a baseline run from another tree compares like with like)."""
        self.fill = Filler(random.Random(f"{self.seed}/{label}"))

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
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
        return 200, {
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


REPAIR = "I could not use that reply"
"""How `confide.llm.generate_structured` opens a repair turn (the bad reply and this
message extend the attempt they repair)."""


@dataclass
class Tally:
    """Characters of one seat and role (module docstring): all requests; those after the
    seat's second call, schema first and without it; the first attempts among them; the
    part of them in requests whose response format the seat had not sent before; those
    after the seat and role's own second call."""

    calls: int = 0
    repairs: int = 0
    chars: int = 0
    shared: int = 0
    late: int = 0
    late_shared: int = 0
    plain: int = 0
    plain_shared: int = 0
    first: int = 0
    first_shared: int = 0
    new_format: int = 0
    warm: int = 0
    warm_shared: int = 0


@dataclass(frozen=True)
class Row:
    """One table row; a share is -1 where no request counts towards it."""

    bench: str
    seat: str
    role: str
    calls: int
    repairs: int
    chars: int
    cached: float
    headline: float
    first_tries: float
    new_format: float
    no_schema: float
    role_warm: float


def _share(part: int, whole: int) -> float:
    return part / whole if whole else -1.0


def measure(server: FakeServer, start: int, run_dir: Path, bench: str) -> list[Row]:
    """Per seat and role of one run: requests, characters and prefix shares (module
    docstring)."""
    owners = attribute(run_dir)
    sent: dict[str, list[str]] = defaultdict(list)
    bare: dict[str, list[str]] = defaultdict(list)
    formats: dict[str, set[str]] = defaultdict(set)
    stats: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for body in server.requests[start:]:
        found = owners.get(key(body["messages"]))
        if not found:  # the provider's one-off capability probe, in no trace
            stats[("-", "probe")].calls += 1
            continue
        seat, purpose = found.pop(0)
        text, plain = serialize(body), serialize(body, schema_first=False)
        shared = max((common(text, old) for old in sent[seat]), default=0)
        plain_shared = max((common(plain, old) for old in bare[seat]), default=0)
        fmt = json.dumps(body.get("response_format"), sort_keys=True)
        repair = str(body["messages"][-1].get("content") or "").startswith(REPAIR)
        row = stats[(seat, purpose)]
        row.calls += 1
        row.repairs += repair
        row.chars += len(text)
        row.shared += shared
        if len(sent[seat]) >= 2:
            row.late += len(text)
            row.late_shared += shared
            row.plain += len(plain)
            row.plain_shared += plain_shared
            if not repair:
                row.first += len(text)
                row.first_shared += shared
            if fmt not in formats[seat]:
                row.new_format += len(text)
        if row.calls > 2:  # this call is after the seat and role's own second
            row.warm += len(text)
            row.warm_shared += shared
        sent[seat].append(text)
        bare[seat].append(plain)
        formats[seat].add(fmt)
    return [
        Row(
            bench,
            seat,
            purpose,
            t.calls,
            t.repairs,
            t.chars,
            t.shared / t.chars if t.chars else 0.0,
            _share(t.late_shared, t.late),
            _share(t.first_shared, t.first),
            _share(t.new_format, t.late),
            _share(t.plain_shared, t.plain),
            _share(t.warm_shared, t.warm),
        )
        for (seat, purpose), t in sorted(stats.items())
    ]


MEASURES: list[tuple[str, str]] = [
    ("headline", "HEADLINE schema first (OpenAI), after the seat's second call"),
    ("first_tries", "the same, first attempts only (repair turns left out)"),
    ("no_schema", "no schema (vLLM, llama.cpp), after the seat's second call"),
    ("role_warm", "schema first, after the seat and role's own second call"),
]


def report(rows: list[Row]) -> None:
    """The table, then one line per measure: the rows at 0.90 or more, and those below."""

    def cell(value: float, width: int = 9) -> str:
        return f"{value:>{width}.2f}" if value >= 0 else f"{'-':>{width}}"

    print("prompt size in characters (a character prefix is a token prefix up to one token)")
    print(
        f"{'benchmark':<26} {'seat':<24} {'role':<11} {'calls':>5} {'fix':>3} {'chars':>8} "
        f"{'cached':>6} {'after 2nd':>9} {'1st tries':>9} {'new fmt':>7} "
        f"{'no schema':>9} {'role warm':>9}"
    )
    for r in rows:
        print(
            f"{r.bench:<26} {r.seat[:24]:<24} {r.role:<11} {r.calls:>5} {r.repairs:>3} "
            f"{r.chars:>8} {r.cached:>6.2f} {cell(r.headline)} {cell(r.first_tries)} "
            f"{cell(r.new_format, 7)} {cell(r.no_schema)} {cell(r.role_warm)}"
        )
    for field, label in MEASURES:
        measured = [r for r in rows if getattr(r, field) >= 0]
        low = [r for r in measured if getattr(r, field) < 0.90]
        lows = Counter(f"{r.bench.split()[0]} {r.role}" for r in low)
        below = ", ".join(f"{part} ({n})" for part, n in sorted(lows.items())) or "none"
        print(
            f"{label}: {len(measured) - len(low)} of {len(measured)} seat/roles at "
            f">= 0.90; below: {below}"
        )
        if field == "headline" and low:
            cold = sum(r.new_format > 0 for r in low)
            print(
                f"  {cold} of those {len(low)} send, after the seat's second call, a response "
                "schema the seat had not sent before (new fmt > 0): a cold start under a "
                "schema-first cache"
            )


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
    report(rows)


if __name__ == "__main__":
    main()
