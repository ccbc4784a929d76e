"""The README main job's whole run on 1 and 2 local workers and on Ray, each against the
others, in one run.

`confide run calbench` (the canonical suite, the four reference lineups, the three
conditions: 1,080 games, with every table, audit and the report) runs three ways: the
local backend with `workers: 1` (one asyncio process) and with `workers: 2` (a pool of two
processes, `confide.runner.pool`), each in a fresh Python process of its own as the CLI
runs (this one runs Ray's threads, with which the pool would spawn rather than fork its
processes), and on a local Ray with 2 worker CPUs, driven from this process (`ray.init`
once before, not counted: a cluster is started once and serves many runs; its workers'
start is counted, as is the pool's: connected already, the run starts them before its
preflight, as it would in a notebook). Each run is timed whole (preflight, task
loading, playing, every output) and by phase (`RunSummary.seconds`: the games, the
outputs). Every run writes into the same directory path (then moved aside), so that the
tables, which name traces by path, can be compared byte for byte.

Fair start: one untimed run first fills a fresh oracle disk cache that all three then read
(`CONFIDE_ORACLE_CACHE`, set before `ray.init` so Ray's workers see it too), and before
each run this process's in-memory task and oracle caches are emptied and its collector
unfrozen, so no run inherits another's warm state. `--rounds N` repeats the three runs N
times in turn and keeps each way's fastest (the machine's other load falls on all).

Checks that every table, results.csv and report.html are byte-identical between the three
(report.html echoes experiment.yaml, whose `workers` and `backend` lines say how the run
went: those lines, and only those, are left out of its comparison). Prints each run, the
ratios, and last the two goals (quiet cores: 2 local workers >= 1.7x and Ray >= 1.6x the
1-worker whole run). On a machine shared with other work the ratios move with the load:
each run's line shows the 1-minute load average before and after it.

    PYTHONPATH=src python bench/whole_run_scaling.py [--limit N] [--rounds 1] [--ways ...]
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from confide.envs.calbench.env import _load_tasks
from confide.envs.calbench.oracle import _solve_cached
from confide.envs.calbench.solvecache import CACHE_ENV
from confide.runner import build_experiment, run_experiment

WAYS: dict[str, dict[str, Any]] = {
    "local-1": {"workers": 1},
    "local-2": {"workers": 2},
    "ray-2": {"backend": "ray"},
}
RUN_SETTING_LINES = (b"workers: ", b"backend: ")
"""The lines of report.html's experiment echo that say how the run went."""


def fresh_run(config: dict[str, Any], out: Path) -> dict[str, float]:
    """`one_run` in a new Python process (confide imported before the clock starts, as
    the CLI has it imported before the run)."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", json.dumps(config), str(out)],
        check=True, capture_output=True, text=True,
    )
    timing: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return timing


def one_run(config: dict[str, Any], out: Path) -> dict[str, float]:
    """Whole-run wall seconds and the phases' of `config` into `out`, from a cold start."""
    gc.unfreeze()
    gc.collect()
    _load_tasks.cache_clear()
    _solve_cached.cache_clear()
    experiment = build_experiment({**config, "output_dir": str(out)})
    load = os.getloadavg()[0]
    start = time.perf_counter()
    summary = run_experiment(experiment, show_progress=False, freeze_gc=True)  # as the CLI
    whole = time.perf_counter() - start
    assert not summary.failed and not summary.interrupted, summary.failed[:3]
    return {"whole": whole, "games": summary.seconds["episodes"],
            "outputs": summary.seconds["outputs"], "episodes": summary.finished,
            "load": load, "load_after": os.getloadavg()[0]}


def outputs(run_dir: Path) -> dict[str, bytes]:
    """Every table (inflated), results.csv and report.html of a run directory, the
    report without its run-setting lines."""
    found = {}
    for path in sorted(run_dir.iterdir()):
        if path.name.endswith((".csv", ".csv.gz")):
            data = path.read_bytes()
            found[path.name] = gzip.decompress(data) if path.suffix == ".gz" else data
    report = (run_dir / "report.html").read_bytes().splitlines(keepends=True)
    found["report.html"] = b"".join(
        line for line in report if not line.lstrip().startswith(RUN_SETTING_LINES)
    )
    return found


def compare(runs: dict[str, Path]) -> bool:
    """Print which outputs differ between the runs; True when none does."""
    names = list(runs)
    first = outputs(runs[names[0]])
    same = True
    for name in names[1:]:
        other = outputs(runs[name])
        differ = sorted(k for k in first.keys() | other.keys() if first.get(k) != other.get(k))
        print(f"  {names[0]} vs {name}: {len(first)} files, "
              + ("all byte-identical" if not differ else f"DIFFER: {', '.join(differ)}"))
        same = same and not differ
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N tasks only")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each way (fastest kept)")
    parser.add_argument("--ways", default=",".join(WAYS),
                        help="comma-separated subset of the ways (default: all three)")
    parser.add_argument("--one", nargs=2, metavar=("CONFIG", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # `fresh_run`'s process
        print(json.dumps(one_run(json.loads(args.one[0]), Path(args.one[1]))))
        return 0
    ways = {way: WAYS[way] for way in args.ways.split(",")}
    if "local-1" not in ways:
        parser.error("--ways needs local-1, the baseline")
    config: dict[str, Any] = {"benchmark": "calbench",
                              **({"limit": args.limit} if args.limit else {})}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[CACHE_ENV] = str(Path(tmp) / "oracle")
        if "ray-2" in ways:
            import ray

            ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            out = Path(tmp) / "run"
            one_run({**config, "workers": 2}, out)  # fills the oracle cache; not timed
            shutil.rmtree(out)
            best: dict[str, dict[str, float]] = {}
            kept: dict[str, Path] = {}
            for round_ in range(args.rounds):
                for way, settings in ways.items():
                    run = one_run if way.startswith("ray") else fresh_run
                    timing = run({**config, **settings}, out)
                    print(f"round {round_ + 1} {way:8s} whole {timing['whole']:6.1f}s   games "
                          f"{timing['games']:6.1f}s   outputs {timing['outputs']:5.1f}s   "
                          f"({timing['episodes']:.0f} episodes; load average "
                          f"{timing['load']:.1f} -> {timing['load_after']:.1f})", flush=True)
                    if way not in best or timing["whole"] < best[way]["whole"]:
                        best[way] = timing
                    kept[way] = out.rename(Path(tmp) / f"{way}-{round_}")
            print("outputs (the last round's runs):")
            identical = compare(kept)
        finally:
            if "ray-2" in ways:
                ray.shutdown()
    base = best["local-1"]
    for way in [w for w in ways if w != "local-1"]:
        print(f"{way} vs local-1: whole run {base['whole'] / best[way]['whole']:.2f}x, "
              f"games {base['games'] / best[way]['games']:.2f}x")
    if len(ways) < len(WAYS):
        print(f"outputs byte-identical: {identical}")
        return 0 if identical else 1
    print(f"ray-2 vs local-2: whole run {best['local-2']['whole'] / best['ray-2']['whole']:.2f}x")
    local = base["whole"] / best["local-2"]["whole"]
    on_ray = base["whole"] / best["ray-2"]["whole"]
    print(f"goals: 2 local workers {local:.2f}x (>= 1.7x), Ray 2 workers {on_ray:.2f}x "
          f"(>= 1.6x), outputs byte-identical: {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
