"""DSM speed: CPU milliseconds per game for DSM-Welfare and DSM-Private over the
public fixture tasks (../shared/anchors/calbench/tasks/*.jsonl) and the canonical suite,
against the published harness's ~120 ms per DSM game on these CPUs (target >= 10x), with
IMAP measured in the same run as the engine's baseline (its seats do almost nothing).

A game is the full A.3-A.5 engine with the protocol in every seat (every sweep, postbox
delivery, observation, batch validation and trace event, recorded in memory). Also shown:
the part of it spent inside the DSM seats, and the protocol-semantic VPS of the game
(privacy/, computed from the recorded trace). CPU time of this process, best of
`--repeat` passes (the machine is shared; wall time is noisy). The fixtures are skipped
cleanly when absent.

    PYTHONPATH=src python bench/calbench_dsm.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path

from confide.core.trace import TraceRecorder
from confide.envs.calbench.actions import CalendarObservation, Envelope, Participant, seat_of
from confide.envs.calbench.engine import Game
from confide.envs.calbench.participants import make_reference
from confide.envs.calbench.participants.dsm import DSM_PRESETS, DsmParticipant
from confide.envs.calbench.privacy import vps_rows
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import load_suite, load_tasks

PUBLISHED_MS = 120.0


class _Clocked:
    """A seat that adds the CPU time of its participant's decisions to a shared counter."""

    def __init__(self, inner: Participant, clock: list[float]) -> None:
        self.inner = inner
        self.name = inner.name
        self.clock = clock

    async def act(self, observation: CalendarObservation) -> Envelope:
        start = time.process_time()
        envelope = await self.inner.act(observation)
        self.clock[0] += time.process_time() - start
        return envelope


def _seat(name: str, seat: str) -> Participant:
    if name in DSM_PRESETS:
        return DsmParticipant(seat, DSM_PRESETS[name])
    return make_reference(seat, name, {})


async def _play(tasks: list[Scenario], name: str, clock: list[float]) -> list[TraceRecorder]:
    traces = []
    for task in tasks:
        agents = range(task.num_agents)
        seats = {seat_of(a): _Clocked(_seat(name, seat_of(a)), clock) for a in agents}
        trace = TraceRecorder(task.task_id)
        await Game(task, seats, trace).play()
        traces.append(trace)
    return traces


def _measure(tasks: list[Scenario], name: str, repeat: int) -> tuple[float, float, float]:
    """(ms/game, ms/game inside the seats, VPS ms/game), best pass."""
    best = (float("inf"), 0.0)
    traces: list[TraceRecorder] = []
    for _ in range(repeat):
        clock = [0.0]
        start = time.process_time()
        traces = asyncio.run(_play(tasks, name, clock))
        total = (time.process_time() - start) * 1000 / len(tasks)
        best = min(best, (total, clock[0] * 1000 / len(tasks)))
    start = time.process_time()
    for task, trace in zip(tasks, traces, strict=True):
        vps_rows(task, trace.events)
    return best[0], best[1], (time.process_time() - start) * 1000 / len(tasks)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best is reported")
    args = parser.parse_args()
    fixtures = Path(os.environ.get("CONFIDE_SHARED", "/work/shared")) / "anchors/calbench/tasks"
    suites = {"canonical": load_suite("canonical")}
    files = sorted(fixtures.glob("*.jsonl"))
    if files:
        suites["fixtures"] = [t for f in files for t in load_tasks(f)]
    else:
        print(f"skipped fixtures: none under {fixtures}")
    print(f"{'suite':<10} {'protocol':<12} {'games':>5} {'ms/game':>8} {'in seats':>9} "
          f"{'VPS ms':>7} {'speed-up':>9}")
    for suite, tasks in suites.items():
        for name in ("imap", *DSM_PRESETS):
            game_ms, seat_ms, vps_ms = _measure(tasks, name, args.repeat)
            ratio = "" if name == "imap" else f"{PUBLISHED_MS / game_ms:>8.1f}x"
            print(f"{suite:<10} {name:<12} {len(tasks):>5} {game_ms:>8.2f} {seat_ms:>9.2f} "
                  f"{vps_ms:>7.2f} {ratio:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
