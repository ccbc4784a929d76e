"""CalBench reference-protocol speed against the published engine (issue 15, target 1).

Plays the 216 public fixture tasks (../shared/anchors/calbench/tasks/*.jsonl) with each
reference protocol in every seat, once with the published engine (the unmodified harness
under ../shared/anchors/calbench/peer/, through its `peer_game.play(task, protocol,
max_turns)`) and once with confide, interleaved task by task in this one process, and
prints the ratio of the published engine's time to ours per protocol.

Both sides are timed as a user gets them: a game plus its metrics. The published harness
times `CalendarGame(config).run()` itself (game and metrics; it reads the fixture's
precomputed optimum). confide's side is `SPEC.run_episode`, exactly what `confide run`
awaits per episode: the engine, the section 4.2 metrics (the scheduled-only oracle is
solved once per problem per process, as in a run) and the leaderboard audit columns,
recorded into an in-memory trace, after `gc.freeze()` as `confide run` does. Both use the
task's own turn limit and the DM condition. Each game is played `--repeat` times per side
and its fastest wall time kept (a neighbour's burst on a shared machine slows whichever
game it overlaps); the figure per protocol is the mean over tasks of those per-game times,
and the ratio is published / confide. Skips cleanly when ../shared is absent.

    PYTHONPATH=src python bench/calbench_protocols.py [--repeat 3] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.trace import TraceRecorder
from confide.envs.calbench import SPEC
from confide.envs.calbench.env import game_limits
from confide.envs.calbench.options import CalbenchOptions
from confide.envs.calbench.scenario import Scenario

PEER_NAMES = {
    "imap": "imap", "sdmap": "sd", "dsm-welfare": "paper_dsm_welfare",
    "dsm-private": "private_dsm",
}
"""Our protocol name -> the published harness's (peer_game.py)."""


def anchors() -> Path:
    return Path(os.environ.get("CONFIDE_SHARED", "/work/shared")) / "anchors/calbench"


def ours(loop: asyncio.AbstractEventLoop, task: Scenario, protocol: str) -> float:
    """Wall seconds of one episode as `confide run` plays it (module docstring)."""
    ctx = EpisodeContext(
        episode_id=task.task_id, task=task, lineup=parse_lineup(protocol), seed=0,
        trace=TraceRecorder(task.task_id), model_factory=_no_models, condition="dm",
    )
    start = time.perf_counter()
    loop.run_until_complete(SPEC.run_episode(ctx))
    return time.perf_counter() - start


def _no_models(spec: str, **_: Any) -> Any:
    raise AssertionError(f"reference protocols call no model ({spec})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="plays per game and side")
    parser.add_argument("--limit", type=int, default=None, help="first N tasks only")
    args = parser.parse_args()
    files = sorted((anchors() / "tasks").glob("*.jsonl"))
    if not files or not (anchors() / "peer" / "peer_game.py").exists():
        print(f"skipped: no fixtures or published engine under {anchors()}")
        return 0
    sys.path.insert(0, str(anchors() / "peer"))
    peer = importlib.import_module("peer_game")
    raw = [json.loads(line) for f in files for line in f.read_text().splitlines() if line]
    tasks = [t for f in files for t in SPEC.load_tasks(None, str(f))]
    pairs = list(zip(raw, tasks, strict=True))[: args.limit]
    turns = [game_limits(CalbenchOptions(), t).max_turns_per_round for _, t in pairs]
    print(f"{len(pairs)} fixture tasks, best of {args.repeat} per game and side")
    print(f"{'protocol':<12} {'published':>10} {'confide':>9} {'ratio':>7}")
    gc.freeze()  # as `confide run` does once its tasks are loaded
    loop = asyncio.new_event_loop()  # one loop for every episode, as in a run
    ratios = []
    for protocol, peer_name in PEER_NAMES.items():
        theirs, mine = [], []
        for (fixture, task), max_turns in zip(pairs, turns, strict=True):
            best_theirs = best_mine = float("inf")
            for _ in range(args.repeat):  # interleaved: a slow spell hits both sides
                best_theirs = min(best_theirs, peer.play(fixture, peer_name, max_turns)[1])
                best_mine = min(best_mine, ours(loop, task, protocol))
            theirs.append(best_theirs)
            mine.append(best_mine)
        published_ms = 1000 * sum(theirs) / len(theirs)
        confide_ms = 1000 * sum(mine) / len(mine)
        ratios.append(published_ms / confide_ms)
        print(f"{protocol:<12} {published_ms:>7.1f} ms {confide_ms:>6.1f} ms "
              f"{ratios[-1]:>6.1f}x")
    print(" ".join(f"{p} {r:.1f}x" for p, r in zip(PEER_NAMES, ratios, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
