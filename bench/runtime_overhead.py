"""Runtime overhead: many short demo episodes against a mock model of fixed latency L at
concurrency C. Prints wall time divided by the ideal (episodes x turns x L / C), which
only the runtime's own work (postbox, traces, runner, progress) can push above 1, and,
because the machine is noisy, also the ratio to a bare-asyncio baseline measured in the
same run (the same sleeps under the same semaphore, with no confide code at all).

Target: <= 1.15.  Usage: python bench/runtime_overhead.py [--episodes 400] [--latency 0.05]
[--concurrency 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from confide.runner import build_experiment, run_experiment


async def bare_asyncio(episodes: int, turns: int, latency: float, concurrency: int) -> None:
    """The floor: each episode awaits `turns` sleeps of `latency` under the semaphore."""
    limit = asyncio.Semaphore(concurrency)

    async def episode() -> None:
        async with limit:
            for _ in range(turns):
                await asyncio.sleep(latency)

    await asyncio.gather(*(episode() for _ in range(episodes)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=40)
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tasks = Path(tmp) / "tasks.jsonl"
        seats = [f"s{i}" for i in range(args.seats)]
        tasks.write_text("".join(
            json.dumps({"id": f"t{i:05d}", "seats": seats, "rounds": args.rounds}) + "\n"
            for i in range(args.episodes)
        ))
        experiment = build_experiment({
            "benchmark": "demo",
            "tasks": str(tasks),
            "lineups": ["mock/echo"],
            "concurrency": args.concurrency,
            "output_dir": str(Path(tmp) / "run"),
            "model_options": {"latency_s": args.latency},
        })
        start = time.perf_counter()
        summary = run_experiment(experiment, show_progress=False)
        wall = time.perf_counter() - start
    turns = args.seats * args.rounds
    ideal = args.episodes * turns * args.latency / args.concurrency
    start = time.perf_counter()
    asyncio.run(bare_asyncio(args.episodes, turns, args.latency, args.concurrency))
    baseline = time.perf_counter() - start
    assert not summary.failed, summary.failed
    print(f"episodes={args.episodes} turns/episode={turns} L={args.latency}s C={args.concurrency}")
    print(f"wall={wall:.3f}s ideal={ideal:.3f}s bare-asyncio baseline={baseline:.3f}s")
    print(f"ratio to baseline: {wall / baseline:.3f}")
    print(f"overhead ratio: {wall / ideal:.3f} (target <= 1.15)")


if __name__ == "__main__":
    main()
