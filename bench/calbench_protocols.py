"""CalBench reference-protocol speed against the published engine.

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

`--baseline-src DIR` also times an earlier confide (DIR is its `src`, e.g. of a commit
unpacked with `git archive`): a subprocess imports it and plays the same games on request,
in turn with the two others, so a slow spell hits all three alike. The extra columns give
its time and the time ratio now / before (at most 1.00x: not slower). The check
is against the last commit before the runtime contract:

    mkdir /tmp/base21 && git archive 21d5ec2 src | tar -x -C /tmp/base21
    PYTHONPATH=src python bench/calbench_protocols.py --baseline-src /tmp/base21/src

    PYTHONPATH=src python bench/calbench_protocols.py [--repeat 3] [--limit N]
        [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.trace import TraceRecorder
from confide.envs.calbench import SPEC
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


def serve(files: list[Path]) -> None:
    """The `--baseline-src` side: answer each "protocol task-index" line on stdin with the
    wall seconds of that episode (this process imports the confide under test)."""
    tasks = [t for f in files for t in SPEC.load_tasks(None, str(f))]
    gc.freeze()
    loop = asyncio.new_event_loop()
    print("ready", flush=True)
    for line in sys.stdin:
        protocol, index = line.split()
        print(ours(loop, tasks[int(index)], protocol), flush=True)


class Baseline:
    """An earlier confide, playing games in a subprocess on request (`serve`)."""

    def __init__(self, src: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(src.resolve())}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env=env, cwd="/",
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.requests, self.answers = self.process.stdin, self.process.stdout
        if self.answers.readline().strip() != "ready":
            raise SystemExit(f"baseline under {src} did not start")

    def play(self, protocol: str, index: int) -> float:
        self.requests.write(f"{protocol} {index}\n")
        self.requests.flush()
        return float(self.answers.readline())

    def close(self) -> None:
        self.requests.close()
        self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="plays per game and side")
    parser.add_argument("--limit", type=int, default=None, help="first N tasks only")
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="also time the confide whose src is this directory")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    files = sorted((anchors() / "tasks").glob("*.jsonl"))
    if args.serve:
        serve(files)
        return 0
    if not files or not (anchors() / "peer" / "peer_game.py").exists():
        print(f"skipped: no fixtures or published engine under {anchors()}")
        return 0
    sys.path.insert(0, str(anchors() / "peer"))
    peer = importlib.import_module("peer_game")
    raw = [json.loads(line) for f in files for line in f.read_text().splitlines() if line]
    tasks = [t for f in files for t in SPEC.load_tasks(None, str(f))]
    pairs = list(zip(raw, tasks, strict=True))[: args.limit]
    from confide.envs.calbench.env import game_limits
    from confide.envs.calbench.options import EnvOptions

    turns = [game_limits(EnvOptions(), t).max_turns_per_round for _, t in pairs]
    baseline = None if args.baseline_src is None else Baseline(args.baseline_src)
    print(f"{len(pairs)} fixture tasks, best of {args.repeat} per game and side")
    extra = f" {'before':>9} {'now/before':>10}" if baseline else ""
    print(f"{'protocol':<12} {'published':>10} {'confide':>9} {'ratio':>7}{extra}")
    gc.freeze()  # as `confide run` does once its tasks are loaded
    loop = asyncio.new_event_loop()  # one loop for every episode, as in a run
    ratios, changes = [], []
    for protocol, peer_name in PEER_NAMES.items():
        theirs, mine, before = [], [], []
        for index, ((fixture, task), max_turns) in enumerate(zip(pairs, turns, strict=True)):
            best_theirs = best_mine = best_before = float("inf")
            for _ in range(args.repeat):  # interleaved: a slow spell hits every side
                best_theirs = min(best_theirs, peer.play(fixture, peer_name, max_turns)[1])
                best_mine = min(best_mine, ours(loop, task, protocol))
                if baseline is not None:
                    best_before = min(best_before, baseline.play(protocol, index))
            theirs.append(best_theirs)
            mine.append(best_mine)
            before.append(best_before)
        published_ms = 1000 * sum(theirs) / len(theirs)
        confide_ms = 1000 * sum(mine) / len(mine)
        ratios.append(published_ms / confide_ms)
        row = (f"{protocol:<12} {published_ms:>7.1f} ms {confide_ms:>6.1f} ms "
               f"{ratios[-1]:>6.1f}x")
        if baseline is not None:
            before_ms = 1000 * sum(before) / len(before)
            changes.append(confide_ms / before_ms)
            row += f" {before_ms:>6.1f} ms {changes[-1]:>9.2f}x"
        print(row)
    if baseline is not None:
        baseline.close()
        print("now/before " + " ".join(
            f"{p} {r:.2f}x" for p, r in zip(PEER_NAMES, changes, strict=True)))
    print(" ".join(f"{p} {r:.1f}x" for p, r in zip(PEER_NAMES, ratios, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
