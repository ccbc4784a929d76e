"""The 114-task conversion: every tau2-bench retail task through the
transformation (envs/incognita/transform.py), the reference agent on every card in every
condition, and the reason for every task left out -- the output of
``confide incognita convert`` -- with CPU times.

Baseline, run in the same process: replaying every task's gold actions once on a fork of
the world, the least any conversion must do (the gold state). The last line prints what
the conversion (gold replay, customer side, golden trajectory) costs per task as a
multiple of that baseline. Skipped cleanly when ../shared/anchors is absent
(CONFIDE_SHARED overrides).

    PYTHONPATH=src python bench/incognita_convert.py [--tasks-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from confide.envs.incognita.conversion import check
from confide.envs.incognita.loaders import load_tau2_tasks, load_world
from confide.envs.incognita.tools import TAU2_TOOLS, replay
from confide.envs.incognita.transform import convert_all

SHARED = Path(os.environ.get("CONFIDE_SHARED", Path(__file__).parents[1] / ".." / "shared"))
ANCHOR = SHARED / "anchors" / "tau_bench_retail"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks-only", action="store_true", help="convert, do not run")
    args = parser.parse_args()
    if not (ANCHOR / "tau2" / "tasks.json").is_file():
        print(f"skipped: tau2-bench anchors not found under {ANCHOR}")
        return
    world = load_world(ANCHOR)
    world.state_hash()
    tasks = load_tau2_tasks(ANCHOR / "tau2" / "tasks.json")

    start = time.process_time()
    for task in tasks:
        replay(world.fork(), task.actions, TAU2_TOOLS)
    baseline = time.process_time() - start

    start = time.process_time()
    conversions = convert_all(world, tasks, "tau2")
    converting = time.process_time() - start

    start = time.process_time()
    report = check(world, conversions, () if args.tasks_only else ("direct", "indirect",
                                                                     "social"))
    running = time.process_time() - start

    print("\n".join(report.lines()))
    n = len(tasks)
    print(f"gold replay (baseline): {1000 * baseline / n:.1f} ms CPU per task")
    print(f"conversion: {1000 * converting / n:.1f} ms CPU per task")
    if not args.tasks_only:
        episodes = 3 * report.cards
        print(f"reference episodes: {1000 * running / episodes:.1f} ms CPU per episode "
              f"({episodes} episodes)")
    print(f"conversion / gold replay: {converting / baseline:.1f}x")
    if any(report.unsolved.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
