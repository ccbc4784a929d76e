"""CalBench reference-protocol speed (issue 3): milliseconds per game for each reference
protocol over the public fixture tasks (../shared/anchors/calbench/tasks/*.jsonl, loaded
with the domain loader), and the ratio to the published harness (~60 ms per IMAP game,
~120 ms per DSM game on these CPUs).

A game is what the harness does per task: the full A.3-A.5 engine (every sweep, postbox
delivery, observation, batch validation and Table 5 trace event, recorded in memory) with
one protocol in every seat. Metrics are timed separately (with the oracle cache warm; a
cold fixture task needs one CP-SAT solve, which is the oracle's cost, not the protocol's).
Times are CPU milliseconds of this process. Each game is timed on its own in every one of
`--repeat` passes and the reported figure is the mean over tasks of each task's fastest
pass: on a shared virtual machine a neighbour's burst slows whichever games it overlaps
by up to 2x, and a per-game minimum discards those bursts without discarding any task.
The headline `ms/game` is measured the way `confide run` plays games: after
`gc.freeze()`, which the runner calls once its tasks are loaded (the 216 scenarios are
large, long-lived object graphs that every full collection would otherwise rescan).
`no-freeze` repeats the timing without it (after a `gc.collect()`, so every protocol
starts from the same heap), and `pass` is the whole-pass mean of the best pass of the
headline timing, for comparison. The speed-up is the published time over `ms/game`
(`no-freeze` gives the other). Skips cleanly when the fixtures are absent.

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
from confide.envs.calbench import SPEC
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.engine import Game, GameOutcome
from confide.envs.calbench.metrics import evaluate
from confide.envs.calbench.participants import make_reference
from confide.envs.calbench.scenario import Scenario

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


async def game_times(tasks: list[Scenario], protocol: str) -> list[float]:
    """CPU ms of each game in one pass (each game's trace is dropped after it, as in a run)."""
    times = []
    for task in tasks:
        start = time.process_time()
        await play(task, protocol)
        times.append((time.process_time() - start) * 1000)
    return times


def per_game_best(tasks: list[Scenario], protocol: str, repeat: int) -> tuple[float, float]:
    """(mean over tasks of each game's fastest pass, mean of the fastest whole pass)."""
    passes = [asyncio.run(game_times(tasks, protocol)) for _ in range(repeat)]
    best_games = [min(times) for times in zip(*passes, strict=True)]
    return sum(best_games) / len(tasks), min(sum(p) for p in passes) / len(tasks)


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
    parser.add_argument("--repeat", type=int, default=5, help="passes; each game's fastest is kept")
    args = parser.parse_args()
    files = sorted(fixture_dir().glob("*.jsonl"))
    if not files:
        print(f"skipped: no public CalBench fixtures under {fixture_dir()}")
        return 0
    tasks = [t for f in files for t in SPEC.load_tasks(None, str(f))]
    print(f"{len(tasks)} fixture tasks from {', '.join(f.name for f in files)}")
    print(
        f"{'protocol':<11} {'ms/game':>8} {'no-freeze':>9} {'pass':>7} {'metrics':>8} "
        f"{'published':>10} {'speed-up':>9} {'no-freeze':>9}"
    )
    for protocol in SPEC.references:
        gc.collect()
        unfrozen, _ = per_game_best(tasks, protocol, args.repeat)
        gc.freeze()  # as the runner does once its tasks are loaded
        frozen, whole = per_game_best(tasks, protocol, args.repeat)
        gc.unfreeze()
        scoring = asyncio.run(metrics_ms(tasks, protocol))
        published = PUBLISHED_MS.get(protocol)
        shown = f"{published:.0f} ms" if published else "n/a"
        ratio = f"{published / frozen:.1f}x" if published else "n/a"
        ratio_unfrozen = f"{published / unfrozen:.1f}x" if published else "n/a"
        print(
            f"{protocol:<11} {frozen:>8.2f} {unfrozen:>9.2f} {whole:>7.2f} {scoring:>8.2f} "
            f"{shown:>10} {ratio:>9} {ratio_unfrozen:>9}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
