"""The README main job against its own games.

`confide run calbench` (the canonical suite, the four reference lineups, the three
conditions: 1,080 games, with every table, audit and the report) should cost at most twice
the CPU time of playing those 1,080 games alone. Both are measured here, in this one
process: first every game of the job's plan is played with the engine alone (the same
players, limits and condition the run gives it; trace in memory, no metrics, no files),
then the whole job runs into a fresh temporary directory with the tasks and oracle caches
emptied (the oracle's disk cache too: an empty `CONFIDE_ORACLE_CACHE`), so it pays its own
task loading and oracle solves as a user's first run does (and, as `confide run` does,
moves what it loaded out of the cyclic collector's sight).
Prints both CPU times, the run directory's size (target <= 50 MB) and, last, the ratio.

    PYTHONPATH=src python bench/calbench_main_job.py [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from confide.core.benchmark import EpisodeContext, expand_lineup
from confide.core.trace import TraceRecorder
from confide.envs.calbench import SPEC
from confide.envs.calbench.engine import Game, GameConfig
from confide.envs.calbench.env import _load_tasks, game_limits, seats
from confide.envs.calbench.options import EnvOptions
from confide.envs.calbench.oracle import _solve_cached
from confide.envs.calbench.participants import make_participant
from confide.envs.calbench.solvecache import CACHE_ENV
from confide.runner import build_experiment, run_experiment
from confide.runner.expand import EpisodePlan, expand


async def play_alone(plan: EpisodePlan) -> None:
    """One game of the plan with the engine only, set up as `env.run_episode` does."""
    task = plan.task
    ctx = EpisodeContext(
        episode_id=plan.episode_id, task=task, lineup=plan.lineup, seed=plan.seed,
        trace=TraceRecorder(plan.episode_id), model_factory=lambda *a, **k: None,
        condition=plan.condition,
    )
    options = EnvOptions()
    limits = game_limits(options, task)
    binding = expand_lineup(plan.lineup, seats(task))
    opts = options.model_dump()
    players = {s: make_participant(s, spec, opts, ctx) for s, spec in binding.items()}
    config = GameConfig(condition=plan.condition or "dm",
                        max_turns_per_round=limits.max_turns_per_round,
                        decision_retries=limits.decision_retries)
    await Game(task, players, ctx.trace, config).play()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N tasks only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[CACHE_ENV] = str(Path(tmp) / "oracle")
        out = Path(tmp) / "calbench"
        data = {"benchmark": "calbench", "output_dir": str(out)}
        if args.limit is not None:
            data["limit"] = args.limit
        experiment = build_experiment(data)
        plans = expand(SPEC, experiment)
        gc.freeze()  # as `confide run` does once its tasks are loaded

        async def games() -> None:
            for plan in plans:
                await play_alone(plan)

        start = time.process_time()
        asyncio.run(games())
        games_cpu = time.process_time() - start
        gc.unfreeze()
        gc.collect()

        _load_tasks.cache_clear()
        _solve_cached.cache_clear()
        start = time.process_time()
        summary = run_experiment(experiment, show_progress=False, freeze_gc=True)  # as the CLI
        run_cpu = time.process_time() - start
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{len(plans)} games ({summary.episodes} episodes in the run, "
          f"{len(summary.failed)} failed)")
    print(f"games alone  {games_cpu:7.1f} s CPU")
    print(f"whole job    {run_cpu:7.1f} s CPU   run directory {size / 1e6:.1f} MB")
    print(f"main job / games alone: {run_cpu / games_cpu:.2f}x (target <= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
