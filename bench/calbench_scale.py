"""CalBench at scale (issue 15, target 4): generate, score and play one game per size.

For N = 5, 10, 20, 50 agents on T=96 slots with M = 4N/5 meetings (M=40 at N=50), three
participants per meeting, density 0.8, `--blocked` blocked errands per agent (default
2) and balanced varied costs, this generates one task with seed 2026 and scores it (the
canonical CP-SAT oracle, the greedy baseline and the exact feasible-assignment count d,
`generate_scenario(score=True)`), then plays it with IMAP in every seat `--games` times
as `confide run` does (`play_episode`: the engine and its trace) and keeps the best.
Printed per size: CPU seconds to generate and score the task, milliseconds per IMAP
game, messages per game and microseconds per message (engine cost should grow about
linearly in messages, so that column should stay roughly flat), and, up to
`--metrics-max-agents` agents (default 10), the milliseconds of the game's section 4.2
metrics and leaderboard columns (`score_episode`, oracle attributions cached after the
first play). Above that size the per-agent oracle attribution (attribution.py, which
enumerates every distinct optimal division) does not finish in minutes: at N=20 the
divisions multiply with every independent tie. Times are CPU seconds of this process
(the machine is shared). The last line is the IMAP game time at N=50.

    PYTHONPATH=src python bench/calbench_scale.py [--blocked 2] [--games 3]
        [--metrics-max-agents 10]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.scoring import score_played
from confide.core.trace import MessageDelivered, TraceRecorder
from confide.envs.calbench import SPEC
from confide.envs.calbench.env import play_episode
from confide.envs.calbench.generator import GeneratorConfig, generate_scenario
from confide.envs.calbench.scenario import Scenario

SIZES = (5, 10, 20, 50)
SLOTS = 96


def config(agents: int, blocked: int) -> GeneratorConfig:
    """The scale family at `agents` agents (module docstring)."""
    return GeneratorConfig(
        num_agents=agents,
        num_slots=SLOTS,
        num_meetings=4 * agents // 5,
        participants_per_meeting=3,
        density=0.8,
        blocked_errands=blocked,
        errand_costs="balanced",
        errand_cost_level=3,
    )


def play(
    loop: asyncio.AbstractEventLoop, task: Scenario, metrics: bool
) -> tuple[float, float, int]:
    """CPU seconds of one IMAP game and of its metrics (0 when not `metrics`), and the
    messages it sent."""
    ctx = EpisodeContext(
        episode_id=task.task_id, task=task, lineup=parse_lineup("imap"), seed=0,
        trace=TraceRecorder(task.task_id), model_factory=_no_models, condition="dm",
    )
    start = time.process_time()
    loop.run_until_complete(play_episode(ctx))
    played = time.process_time()
    if metrics:
        assert SPEC.score_episode is not None
        loop.run_until_complete(score_played(ctx, SPEC.score_episode))
    scored = time.process_time()
    messages = sum(1 for e in ctx.trace.events if isinstance(e, MessageDelivered))
    return played - start, scored - played, messages


def _no_models(spec: str, **_: object) -> object:
    raise AssertionError(f"reference protocols call no model ({spec})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocked", type=int, default=2, help="blocked errands per agent")
    parser.add_argument("--games", type=int, default=3, help="plays per size (best kept)")
    parser.add_argument("--metrics-max-agents", type=int, default=10,
                        help="score the games up to this many agents")
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    print(f"T={SLOTS}, M=4N/5, {args.blocked} blocked errand(s) per agent, IMAP in every seat")
    print(f"{'N':>3} {'M':>3} {'generate+score':>15} {'d':>8} {'IMAP game':>10} "
          f"{'messages':>8} {'us/message':>10} {'metrics':>10}")
    game_ms = 0.0
    for agents in SIZES:
        cfg = config(agents, args.blocked)
        start = time.process_time()
        task = generate_scenario(cfg, 2026, task_id=f"scale-n{agents}")
        generated = time.process_time() - start
        metrics = agents <= args.metrics_max_agents
        runs = [play(loop, task, metrics) for _ in range(args.games)]
        best = min(r[0] for r in runs)
        scored = f"{1000 * min(r[1] for r in runs):>7.1f} ms" if metrics else f"{'-':>10}"
        messages = runs[0][2]
        game_ms = 1000 * best
        fraction = task.difficulty.fraction if task.difficulty is not None else float("nan")
        print(f"{agents:>3} {cfg.num_meetings:>3} {generated:>13.2f} s {fraction:>8.4f} "
              f"{game_ms:>7.1f} ms {messages:>8} {1e6 * best / max(messages, 1):>10.0f} "
              f"{scored}", flush=True)
    print(f"N=50 IMAP game {game_ms:.1f} ms")


if __name__ == "__main__":
    main()
