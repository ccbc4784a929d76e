"""Ray backend scaling, against the local backend measured in the same run.

1. The README main job (`confide run calbench`: the four reference protocols on the
   canonical suite under the three conditions, CPU-bound) on the local backend (one
   process) and on a local Ray with `--workers` worker processes, checking that both
   wrote the same results.csv. Prints both walls and the speed-up (goal >= 1.6x with 2
   workers on 2 cores). A Ray run pays a fixed start (the workers import confide) that a
   one-episode Ray run measures; the speed-up is printed with it and without it.
   `ray.init` itself is timed apart: a cluster is started once and serves many runs.
   Each run's two phases are printed apart: playing the episodes (what Ray spreads) and
   the derived outputs, which the driver writes alone on either backend; the goal is
   for the first. The driver's CPU during the games (a thread samples the process's CPU
   time) is printed as a share of one core: on 2 cores it competes with the workers.
   Both runs freeze the collector after loading, as `confide run` does.
2. Per-episode overhead with a mock-latency lineup (as bench/runtime_overhead.py): demo
   episodes against `mock/echo` with latency L at concurrency C, N and 2N of them, on
   both backends. The cost of the second N episodes (wall(2N) - wall(N)) cancels every
   fixed cost; it is printed over its ideal (N x turns x L / C) for each backend, with
   Ray's extra time per episode.

On a machine shared with other work the ratios move with the load: run it on quiet cores.
The last line is the games phase's speed-up.
Usage: python bench/ray_scaling.py [--limit N] [--workers 2] [--episodes 300]
[--latency 0.05] [--concurrency 20]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import ray

from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv


def timed_run(
    config: dict[str, Any], out: Path
) -> tuple[float, list[dict[str, str]], dict[str, float]]:
    """Wall seconds of one run, its results.csv rows and its phases' wall seconds, with
    `driver_cpu`: this process's CPU seconds while the episodes were played."""
    experiment = build_experiment({**config, "output_dir": str(out)})
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append((time.perf_counter(), time.process_time()))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    summary = run_experiment(experiment, show_progress=False, freeze_gc=True)
    end = time.perf_counter()
    done.set()
    sampler.join()
    assert not summary.failed, summary.failed[:3]
    played_end = end - summary.seconds["outputs"]
    played = [cpu for at, cpu in samples
              if played_end - summary.seconds["episodes"] <= at <= played_end]
    driver_cpu = played[-1] - played[0] if len(played) >= 2 else 0.0
    phases = {**summary.seconds, "driver_cpu": driver_cpu}
    return end - start, read_csv(out / "results.csv"), phases


def demo_config(tmp: Path, episodes: int, latency: float, concurrency: int) -> dict[str, Any]:
    """Demo episodes of 3 seats x 2 rounds against mock/echo with latency `latency`."""
    tasks = tmp / f"tasks-{episodes}.jsonl"
    tasks.write_text("".join(
        json.dumps({"id": f"t{i:05d}", "seats": ["s0", "s1", "s2"], "rounds": 2}) + "\n"
        for i in range(episodes)
    ))
    return {
        "benchmark": "demo", "tasks": str(tasks), "lineups": ["mock/echo"],
        "concurrency": concurrency, "model_options": {"latency_s": latency},
    }


def main_job(tmp: Path, limit: int | None) -> float:
    """Print the main job's comparison; returns the games phase's speed-up."""
    config: dict[str, Any] = {"benchmark": "calbench", **({"limit": limit} if limit else {})}
    local, local_rows, local_phases = timed_run(config, tmp / "main-local")
    on_ray, ray_rows, ray_phases = timed_run({**config, "backend": "ray"}, tmp / "main-ray")
    start, _, _ = timed_run({**demo_config(tmp, 1, 0.0, 1), "backend": "ray"}, tmp / "start")
    episodes = len({r["episode_id"] for r in local_rows})
    print(f"main job ({episodes} episodes): local {local:.1f}s, ray {on_ray:.1f}s "
          f"(of which the workers' start, from a 1-episode ray run: {start:.1f}s); "
          f"identical results.csv: {ray_rows == local_rows}")
    for name, phases in (("local", local_phases), ("ray", ray_phases)):
        print(f"  {name}: playing the episodes {phases['episodes']:.1f}s (driver CPU "
              f"{phases['driver_cpu'] / phases['episodes']:.2f} of a core), "
              f"derived outputs (on the driver) {phases['outputs']:.1f}s")
    print(f"  speed-up of the whole run {local / on_ray:.2f}x with the start, "
          f"{local / max(on_ray - start, 1e-9):.2f}x without")
    games = local_phases["episodes"] / ray_phases["episodes"]
    print(f"  speed-up of playing the games {games:.2f}x (goal >= 1.6x)")
    return games


def overhead(
    tmp: Path, episodes: int, latency: float, concurrency: int, workers: int
) -> None:
    turns = 3 * 2
    ideal = episodes * turns * latency / concurrency
    print(f"mock latency: {turns} calls per episode, L={latency}s, C={concurrency}; the "
          f"second {episodes} episodes (ideal {ideal:.2f}s):")
    marginal = {}
    for backend in ("local", "ray"):
        # on Ray `concurrency` is per worker: the same C episodes in flight in all
        at_once = concurrency if backend == "local" else max(1, concurrency // workers)
        walls = [
            timed_run({**demo_config(tmp, n, latency, at_once), "backend": backend},
                      tmp / f"mock-{backend}-{n}")[0]
            for n in (episodes, 2 * episodes)
        ]
        marginal[backend] = walls[1] - walls[0]
        print(f"  {backend}: walls {walls[0]:.2f}s / {walls[1]:.2f}s, second half over "
              f"ideal {marginal[backend] / ideal:.2f}")
    extra = (marginal["ray"] - marginal["local"]) / episodes * 1000
    print(f"  ray adds {extra:.1f} ms per episode")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="main job: first N tasks")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args()
    start = time.perf_counter()
    ray.init(address="local", num_cpus=args.workers, include_dashboard=False,
             log_to_driver=False)
    print(f"ray.init with {args.workers} CPUs: {time.perf_counter() - start:.1f}s (not counted)")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            games = main_job(Path(tmp), args.limit)
            overhead(Path(tmp), args.episodes, args.latency, args.concurrency, args.workers)
        print(f"speed-up of playing the games with {args.workers} Ray workers: {games:.2f}x")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
