"""Cost of running `local/smollm2` in a worker process: wall seconds
per call through the worker (`LocalWorker`: pickled request over a socket pair, reply
back) against the same `LlamaEngine` called in this process, as the provider did
before. Same settings, same prompts, same run; the two paths alternate call by call so
that load from other processes on the machine falls on both alike. Each path keeps its
own prefix cache and sees the same sequence of requests (free text and
schema-constrained JSON, repeated `--rounds` times, so later rounds resume from cached
states as agents' threads do). Wall time, because the worker's work happens in another
process. Needs the `local` extra.

    PYTHONPATH=src python bench/local_worker.py [--rounds 3] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from confide.llm.providers.llama_engine import LlamaEngine
from confide.llm.providers.local import DEFAULT_PREFIX_CACHE_MB, LOCAL_MODELS, find_weights
from confide.llm.providers.local_worker import LocalWorker
from confide.llm.types import GenerateConfig

Complete = Callable[[Sequence[dict[str, Any]], GenerateConfig], dict[str, Any]]

PROMPTS = (
    "Say hi.",
    "Name three fruits.",
    "What is the capital of France? Answer in one word.",
    "Write one sentence about the sea.",
)
SCHEMA = {
    "type": "object",
    "properties": {"greeting": {"type": "string", "maxLength": 40}, "polite": {"type": "boolean"}},
    "required": ["greeting", "polite"],
}
REQUESTS: tuple[tuple[list[dict[str, Any]], GenerateConfig], ...] = (
    *(([{"role": "user", "content": p}], GenerateConfig(max_tokens=16)) for p in PROMPTS),
    (
        [{"role": "user", "content": "Greet me politely, as JSON."}],
        GenerateConfig(max_tokens=32, response_schema=SCHEMA),
    ),
)


def timed(complete: Complete, messages: list[dict[str, Any]], config: GenerateConfig) -> float:
    start = time.perf_counter()
    complete(messages, config)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    settings = {
        "path": str(find_weights("smollm2")),
        "n_ctx": LOCAL_MODELS["smollm2"].n_ctx,
        "n_threads": args.threads,
        "cache_mb": DEFAULT_PREFIX_CACHE_MB,
    }
    start = time.perf_counter()
    engine = LlamaEngine(**settings)
    load_in = time.perf_counter() - start
    worker = LocalWorker(LlamaEngine, settings, "local/smollm2")
    # the first call starts the worker and loads the model there
    load_worker = timed(
        worker.complete, [{"role": "user", "content": "Hi"}], GenerateConfig(max_tokens=1)
    )
    engine.complete([{"role": "user", "content": "Hi"}], GenerateConfig(max_tokens=1))
    print(f"load: in-process {load_in:.2f} s, worker start + load + 1 token {load_worker:.2f} s")

    seconds: dict[str, list[float]] = {"in-process": [], "worker": []}
    try:
        for _ in range(args.rounds):
            for messages, config in REQUESTS:
                seconds["in-process"].append(timed(engine.complete, messages, config))
                seconds["worker"].append(timed(worker.complete, messages, config))
    finally:
        engine.close()
        worker.close()
    for path, values in seconds.items():
        print(
            f"{path:>10}: {statistics.mean(values):.3f} s/call mean, "
            f"{statistics.median(values):.3f} median over {len(values)} calls"
        )
    ratio = statistics.mean(seconds["worker"]) / statistics.mean(seconds["in-process"])
    print(f"worker / in-process seconds per call: {ratio:.3f}")


if __name__ == "__main__":
    main()
