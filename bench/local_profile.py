"""Where `local/smollm2`'s time goes in a real run: one JSON line per model call with
its prompt tokens, the tokens llama.cpp actually processed (the rest came from the
prefix cache), generated tokens, llama.cpp's prompt and generation milliseconds, the
worker's CPU seconds and wall seconds, and who asked (the first words of the system
message). Runs any `confide` command with the local engine swapped for a timing
subclass, so the run itself is unchanged; then prints a summary per asker.
`--stock` runs llama-cpp-python's own `Llama` (its sampler chain and state saving)
instead of `GreedyGrammarLlama`: the baseline; the two runs' traces should hold the same
calls and replies.

    PYTHONPATH=src python bench/local_profile.py --log calls.jsonl [--stock] -- \\
        run sotopia-tom --suite core --task-id entertainment-storm-concert ...
    PYTHONPATH=src python bench/local_profile.py --summary calls.jsonl

Needs the `local` extra.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confide.llm.providers import local
from confide.llm.providers.llama_engine import LlamaEngine
from confide.llm.types import GenerateConfig

LOG_ENV = "CONFIDE_LOCAL_PROFILE_LOG"
STOCK_ENV = "CONFIDE_LOCAL_PROFILE_STOCK"


def asker(messages: Sequence[dict[str, Any]]) -> str:
    """The first words of the system message (or of the first message)."""
    text = str(messages[0].get("content") or "") if messages else ""
    return " ".join(text.split()[:6])[:60]


class TimedEngine(LlamaEngine):
    """`LlamaEngine` that appends one JSON line of timings per call to $LOG_ENV."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if os.environ.get(STOCK_ENV):
            import llama_cpp

            self.llama.__class__ = llama_cpp.Llama

    def complete(
        self, messages: Sequence[dict[str, Any]], config: GenerateConfig
    ) -> dict[str, Any]:
        import llama_cpp

        ctx = self.llama.ctx
        llama_cpp.llama_perf_context_reset(ctx)
        wall, cpu = time.perf_counter(), time.process_time()
        output = super().complete(messages, config)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        perf = llama_cpp.llama_perf_context(ctx)
        usage = output.get("usage") or {}
        row = {
            "asker": asker(messages),
            "schema": config.response_schema is not None,
            "max_tokens": config.max_tokens,
            "prompt_tokens": usage.get("prompt_tokens"),
            "processed": perf.n_p_eval,
            "generated": usage.get("completion_tokens"),
            "prompt_s": perf.t_p_eval_ms / 1000,
            "gen_s": perf.t_eval_ms / 1000,
            "wall_s": wall,
            "cpu_s": cpu,
            "finish": output["choices"][0].get("finish_reason"),
            "threads": self.llama.n_threads,
        }
        with open(os.environ[LOG_ENV], "a") as log:
            log.write(json.dumps(row) + "\n")
        return output


def summary(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for row in rows:
        groups[row["asker"]].append(row)
    keys = ("prompt_tokens", "processed", "generated", "prompt_s", "gen_s", "wall_s", "cpu_s")
    print(f"{'asker':60} {'calls':>5} " + " ".join(f"{k:>13}" for k in keys) + "  cap")
    for name, group in [*sorted(groups.items()), ("ALL", rows)]:
        means = [sum(float(r[k] or 0) for r in group) / len(group) for k in keys]
        capped = sum(r["finish"] == "length" for r in group)
        print(f"{name:60} {len(group):5} " + " ".join(f"{m:13.2f}" for m in means)
              + f"  {capped}")
    total = {k: sum(float(r[k] or 0) for r in rows) for k in keys}
    print("totals: " + ", ".join(f"{k} {v:,.1f}" for k, v in total.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path)
    parser.add_argument("--summary", type=Path)
    parser.add_argument("--stock", action="store_true", help="llama-cpp-python's own Llama")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.summary:
        summary(args.summary)
        return
    os.environ[LOG_ENV] = str(args.log.resolve())
    if args.stock:
        os.environ[STOCK_ENV] = "1"
    # the worker process imports this module from the same sys.path (bench/ first)
    from local_profile import TimedEngine as Engine

    local.engine_for = lambda model: Engine  # type: ignore[assignment]
    from confide.cli.main import main as confide_main

    sys.argv = ["confide", *[a for a in args.command if a != "--"]]
    try:
        confide_main()
    finally:
        summary(args.log)


if __name__ == "__main__":
    main()
