"""CalBench with LLM seats: runtime overhead against model latency, and prompt size.

Runs the canonical suite (the CalBench paper §4.1) with every seat played by the LLM agent on the
`mock/json` model (it answers each step with an empty envelope, so every DECISION batch
is rejected until its retries run out: a fixed, deterministic number of calls per game)
given a latency of L seconds per call, C games at a time, through `confide.runner`.

Within a game every agent call waits for the previous one (the engine asks one seat at a
time); the post-round reflection calls (F.3, on by default) run at once, one wave per
round. So a game cannot finish faster than (agent calls + reflection waves) times L, and
C games at a time cannot finish faster than the sum of those critical paths divided by C,
nor than the longest one. The bench prints wall time / that lower bound (target <= 1.2),
and per game the prompt tokens sent (the mock's estimate: 4 characters a token plus 3 a
message) and the share of them in a run of leading messages the same seat already sent in
an earlier request (the stable prefix a provider's prompt cache can serve).

With --baseline the same run is also timed with no model latency: the runtime's own work
(task loading and label hydration, engine, recording every prompt, scoring, the privacy
and audit tables), which is what pushes the ratio above 1 when L is small.

Usage: python bench/calbench_llm_wall.py [--latency 0.5] [--concurrency 30]
[--condition dm] [--limit N] [--no-reflection] [--baseline]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from collections import Counter
from pathlib import Path

from confide.core.trace import ModelCall, Trace, read_trace, trace_files
from confide.registry import get_benchmark
from confide.runner import build_experiment, run_experiment


def tokens(messages: list[dict[str, object]]) -> int:
    """The mock's prompt-token estimate for a list of messages."""
    return sum(math.ceil(len(str(m["content"])) / 4) + 3 for m in messages)


def common_prefix(a: list[dict[str, object]], b: list[dict[str, object]]) -> int:
    """How many leading messages two requests share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


GameStats = tuple[int, int, int, Counter[str]]


def game_stats(trace: Trace) -> GameStats:
    """(sequential model calls, prompt tokens, prompt tokens in a repeated prefix, calls by
    purpose) of one game. Agent calls are sequential; the reflection calls after a round
    run at once (one wave per round), so each uninterrupted run of them counts once."""
    calls = [e for e in trace.events if isinstance(e, ModelCall)]
    purposes = Counter(c.purpose for c in calls)
    sequential = sum(
        1
        for i, c in enumerate(calls)
        if c.purpose == "act" or i == 0 or calls[i - 1].purpose == "act"
    )
    seen: dict[str | None, list[list[dict[str, object]]]] = {}
    sent = repeated = 0
    for call in calls:
        sent += tokens(call.messages)
        earlier = seen.setdefault(call.seat, [])
        shared = max((common_prefix(call.messages, e) for e in earlier), default=0)
        repeated += tokens(call.messages[:shared])
        earlier.append(call.messages)
    return sequential, sent, repeated, purposes


def timed_run(args: argparse.Namespace, latency: float) -> tuple[float, list[GameStats]]:
    """Wall time of one canonical run at model latency `latency`, and its games' stats."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        experiment = build_experiment(
            {
                "benchmark": "calbench",
                "suite": "canonical",
                "lineups": ["mock/json"],
                "conditions": args.condition or ["dm"],
                "limit": args.limit,
                "concurrency": args.concurrency,
                "output_dir": str(run_dir),
                "model_options": {"latency_s": latency},
                "options": {"reflection": not args.no_reflection},
            }
        )
        start = time.perf_counter()
        summary = run_experiment(experiment, show_progress=False)
        wall = time.perf_counter() - start
        assert not summary.failed, summary.failed
        traces = trace_files(run_dir / "traces")
        return wall, [game_stats(read_trace(p)) for p in traces]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=30)
    parser.add_argument("--condition", action="append", default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--no-reflection", action="store_true")
    parser.add_argument(
        "--baseline", action="store_true", help="also time the same run with no model latency"
    )
    args = parser.parse_args()
    get_benchmark("calbench")  # import the environment before the clock starts

    wall, stats = timed_run(args, args.latency)
    games = len(stats)
    calls = [s[0] for s in stats]
    sent = sum(s[1] for s in stats)
    repeated = sum(s[2] for s in stats)
    purposes = sum((s[3] for s in stats), Counter[str]())
    bound = max(sum(calls) * args.latency / args.concurrency, max(calls) * args.latency)
    print(
        f"games={games} conditions={','.join(args.condition or ['dm'])} L={args.latency}s "
        f"C={args.concurrency}"
    )
    print(
        f"sequential model calls per game: mean {sum(calls) / games:.1f}, max {max(calls)}; "
        f"calls by purpose: {dict(purposes)}"
    )
    print(
        f"prompt tokens per game: {sent / games:,.0f} "
        f"({repeated / sent:.1%} in a prefix the seat already sent)"
    )
    if args.baseline:
        print(f"same run without model latency: {timed_run(args, 0.0)[0]:.2f}s")
    print(f"wall={wall:.2f}s critical-path lower bound={bound:.2f}s")
    print(f"wall / critical path: {wall / bound:.3f} (target <= 1.2)")


if __name__ == "__main__":
    main()
