"""Ray backend scaling (issue 19), against the local backend measured in the same run.

1. The README main job (`confide run calbench`: the four reference protocols on the
   canonical suite under the three conditions, CPU-bound) on the local backend (one
   process) and on a local Ray with `--workers` worker processes. Prints both walls and
   the speed-up (goal >= 1.6x with 2 workers on 2 cores), and checks that both runs
   wrote the same results.csv. Ray's own start (`ray.init`) is timed apart: a cluster is
   started once and serves many runs; the workers' start is part of the Ray wall.
2. Per-episode overhead with a mock-latency lineup (as bench/runtime_overhead.py): demo
   episodes against `mock/echo` with latency L at concurrency C on both backends. Prints
   each wall over the ideal (episodes x turns x L / C) and Ray's extra time per episode.

On a machine shared with other work the ratios move with the load: run it on quiet cores.
Usage: python bench/ray_scaling.py [--limit N] [--workers 2] [--episodes 200]
[--latency 0.05] [--concurrency 20]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import ray

from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv


def timed_run(config: dict[str, Any], out: Path) -> tuple[float, list[dict[str, str]]]:
    """Wall seconds of one run and its results.csv rows."""
    experiment = build_experiment({**config, "output_dir": str(out)})
    start = time.perf_counter()
    summary = run_experiment(experiment, show_progress=False)
    wall = time.perf_counter() - start
    assert not summary.failed, summary.failed[:3]
    return wall, read_csv(out / "results.csv")


def main_job(tmp: Path, limit: int | None) -> None:
    config: dict[str, Any] = {"benchmark": "calbench", **({"limit": limit} if limit else {})}
    local, local_rows = timed_run(config, tmp / "main-local")
    on_ray, ray_rows = timed_run({**config, "backend": "ray"}, tmp / "main-ray")
    same = ray_rows == local_rows
    print(f"main job ({len({r['episode_id'] for r in local_rows})} episodes): "
          f"local {local:.1f}s, ray {on_ray:.1f}s, speed-up {local / on_ray:.2f}x "
          f"(goal >= 1.6x); identical results.csv: {same}")


def overhead(tmp: Path, episodes: int, latency: float, concurrency: int) -> None:
    tasks = tmp / "tasks.jsonl"
    seats, rounds = 3, 2
    tasks.write_text("".join(
        json.dumps({"id": f"t{i:05d}", "seats": [f"s{j}" for j in range(seats)],
                    "rounds": rounds}) + "\n"
        for i in range(episodes)
    ))
    config: dict[str, Any] = {
        "benchmark": "demo", "tasks": str(tasks), "lineups": ["mock/echo"],
        "concurrency": concurrency, "model_options": {"latency_s": latency},
    }
    ideal = episodes * seats * rounds * latency / concurrency
    local, _ = timed_run(config, tmp / "mock-local")
    on_ray, _ = timed_run({**config, "backend": "ray"}, tmp / "mock-ray")
    print(f"mock latency: {episodes} episodes x {seats * rounds} calls, L={latency}s, "
          f"C={concurrency}, ideal {ideal:.2f}s")
    print(f"  local {local:.2f}s (wall/ideal {local / ideal:.2f}); ray {on_ray:.2f}s "
          f"(wall/ideal {on_ray / ideal:.2f}); ray adds {(on_ray - local) / episodes * 1000:.1f} "
          "ms per episode (workers' start included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="main job: first N tasks")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args()
    start = time.perf_counter()
    ray.init(address="local", num_cpus=args.workers, include_dashboard=False,
             log_to_driver=False)
    print(f"ray.init with {args.workers} CPUs: {time.perf_counter() - start:.1f}s (not counted)")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            main_job(Path(tmp), args.limit)
            overhead(Path(tmp), args.episodes, args.latency, args.concurrency)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
