"""CalBench reference-protocol speed (issue 3): milliseconds per game for each reference
protocol over the public fixture tasks (../shared/anchors/calbench/tasks/*.jsonl, loaded
with the domain loader), and the ratio to the published harness (~60 ms per IMAP game,
~120 ms per DSM game on these CPUs).

A game is what the harness does per task: the full A.3-A.5 engine (every sweep, postbox
delivery, observation, batch validation and Table 5 trace event, recorded in memory) with
one protocol in every seat. Metrics are timed separately (with the oracle cache warm; a
cold fixture task needs one CP-SAT solve, which is the oracle's cost, not the protocol's).
Times are CPU milliseconds of this process, best of `--repeat` passes (the machine is
shared, wall time is noisy). `frozen` repeats the timing after `gc.freeze()`: the 216
loaded scenarios are large, long-lived object graphs that every full collection would
otherwise rescan (a runner can freeze its task list once after loading it). Skips cleanly
when the fixtures are absent.

    PYTHONPATH=src python bench/calbench_protocols.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from pathlib import Path

from confide.core.trace import TraceRecorder
from confide.envs.calendar import SPEC
from confide.envs.calendar.actions import seat_of
from confide.envs.calendar.engine import Game, GameOutcome
from confide.envs.calendar.metrics import evaluate
from confide.envs.calendar.participants import make_reference
from confide.envs.calendar.scenario import Scenario

PUBLISHED_MS = {"imap": 60.0, "dsm-welfare": 120.0, "dsm-private": 120.0}
"""Published harness time per game on these CPUs (issue 3); no figure exists for SD-MAP."""


def fixture_dir() -> Path:
    return Path(os.environ.get("CONFIDE_SHARED", "/work/shared")) / "anchors/calbench/tasks"


async def play(task: Scenario, protocol: str) -> tuple[GameOutcome, TraceRecorder]:
    """One game with `protocol` in every seat, traced in memory."""
    seats = [seat_of(a) for a in range(task.num_agents)]
    players = {seat: make_reference(seat, protocol, {}) for seat in seats}
    trace = TraceRecorder()
    outcome = await Game(task, players, trace).play()
    return outcome, trace


async def timed_pass(tasks: list[Scenario], protocol: str) -> float:
    """CPU ms per game over one pass (each game's trace is dropped after it, as in a run)."""
    start = time.process_time()
    for task in tasks:
        await play(task, protocol)
    return (time.process_time() - start) * 1000 / len(tasks)


async def metrics_ms(tasks: list[Scenario], protocol: str) -> float:
    """CPU ms per game to score games, with the oracle cache already warm."""
    games = [(task, *await play(task, protocol)) for task in tasks]
    for task, outcome, trace in games:
        evaluate(task, trace.events, outcome)
    start = time.process_time()
    for task, outcome, trace in games:
        evaluate(task, trace.events, outcome)
    return (time.process_time() - start) * 1000 / len(tasks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best is reported")
    args = parser.parse_args()
    files = sorted(fixture_dir().glob("*.jsonl"))
    if not files:
        print(f"skipped: no public CalBench fixtures under {fixture_dir()}")
        return 0
    tasks = [t for f in files for t in SPEC.load_tasks(None, str(f))]
    print(f"{len(tasks)} fixture tasks from {', '.join(f.name for f in files)}")
    print(
        f"{'protocol':<10} {'ms/game':>8} {'frozen':>8} {'metrics':>8} "
        f"{'published':>10} {'speed-up':>9} {'frozen':>7}"
    )
    for protocol in SPEC.references:
        plain = min(asyncio.run(timed_pass(tasks, protocol)) for _ in range(args.repeat))
        gc.freeze()  # the loaded tasks are long-lived: keep them out of every collection
        frozen = min(asyncio.run(timed_pass(tasks, protocol)) for _ in range(args.repeat))
        gc.unfreeze()
        scoring = asyncio.run(metrics_ms(tasks, protocol))
        published = PUBLISHED_MS.get(protocol)
        shown = f"{published:.0f} ms" if published else "n/a"
        ratio = f"{published / plain:.1f}x" if published else "n/a"
        ratio_frozen = f"{published / frozen:.1f}x" if published else "n/a"
        print(
            f"{protocol:<10} {plain:>8.2f} {frozen:>8.2f} {scoring:>8.2f} "
            f"{shown:>10} {ratio:>9} {ratio_frozen:>7}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
