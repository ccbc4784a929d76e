"""CalBench at scale: generate, score and play one game per size.

For N = 5, 10, 20, 50 agents on T=96 slots with M = 4N/5 meetings (M=40 at N=50), three
participants per meeting, density 0.8, `--blocked` blocked errands per agent (default
2) and balanced varied costs, this generates one task per seed of `--seeds` (default
2026, 1 and 3: at N=50, seed 1's optimum is one tie of all 40 meetings) (with its
canonical CP-SAT oracle, greedy baseline and exact feasible-assignment count d,
`generate_scenario(score=True)`), then plays it with IMAP in every seat `--games` times
as `confide run` does (`play_episode`: the engine and its trace) and scores each game
(`score_episode`: the section 4.2 metrics with the per-agent oracle attribution over
every tied optimal division, attribution.py, and the leaderboard columns). Printed per
size: CPU seconds to generate the task, milliseconds to score the first game (the
attributions are computed then and cached for the later games), the number of
distinct optimal divisions of the full oracle, milliseconds per IMAP game (best of
`--games`), messages per game and microseconds per message: engine cost should grow
about linearly in messages, so that column should stay roughly flat. Times are CPU
seconds of this process (the machine is shared). The last line is the N=50 figures:
the slowest generation and scoring over the seeds and the median IMAP game.

    PYTHONPATH=src python bench/calbench_scale.py [--blocked 2] [--games 3] [--seeds 2026 1 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.scoring import score_played
from confide.core.trace import MessageDelivered, TraceRecorder
from confide.envs.calbench import SPEC
from confide.envs.calbench.attribution import optimal_divisions
from confide.envs.calbench.env import play_episode
from confide.envs.calbench.generator import GeneratorConfig, generate_scenario
from confide.envs.calbench.metrics import metric_scale, scaled_calendars
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.world import Calendar, Meeting

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


def play(loop: asyncio.AbstractEventLoop, task: Scenario) -> tuple[float, float, int, int]:
    """CPU seconds of one IMAP game and of its scoring, the messages it sent and the
    number of optimal divisions its metrics averaged over."""
    ctx = EpisodeContext(
        episode_id=task.task_id, task=task, lineup=parse_lineup("imap"), seed=0,
        trace=TraceRecorder(task.task_id), model_factory=_no_models, condition="dm",
    )
    start = time.process_time()
    loop.run_until_complete(play_episode(ctx))
    played = time.process_time()
    assert SPEC.score_episode is not None
    loop.run_until_complete(score_played(ctx, SPEC.score_episode))
    scored = time.process_time()
    messages = sum(1 for e in ctx.trace.events if isinstance(e, MessageDelivered))
    divisions = optimal_divisions(*_problem(task))
    assert divisions is not None
    return played - start, scored - played, messages, divisions.count


def _problem(task: Scenario) -> tuple[tuple[Calendar, ...], tuple[Meeting, ...]]:
    """The full oracle problem on the metric scale (metrics.py)."""
    return scaled_calendars(task, metric_scale(task)), task.to_meetings()


def _no_models(spec: str, **_: object) -> object:
    raise AssertionError(f"reference protocols call no model ({spec})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocked", type=int, default=2, help="blocked errands per agent")
    parser.add_argument("--games", type=int, default=3, help="plays per task (best kept)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[2026, 1, 3], help="task seeds")
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    print(f"T={SLOTS}, M=4N/5, {args.blocked} blocked errand(s) per agent, IMAP in every seat")
    print(f"{'N':>3} {'M':>3} {'seed':>5} {'generate':>9} {'score':>10} {'divisions':>12} "
          f"{'IMAP game':>10} {'messages':>8} {'us/message':>10}")
    rows: list[tuple[float, float, float]] = []
    for agents in SIZES:
        cfg = config(agents, args.blocked)
        rows = []
        for seed in args.seeds:
            start = time.process_time()
            task = generate_scenario(cfg, seed, task_id=f"scale-n{agents}-s{seed}")
            generated = time.process_time() - start
            runs = [play(loop, task) for _ in range(args.games)]
            best = min(r[0] for r in runs)
            _, scored, messages, divisions = runs[0]
            rows.append((generated, scored, best))
            print(f"{agents:>3} {cfg.num_meetings:>3} {seed:>5} {generated:>7.2f} s "
                  f"{1000 * scored:>7.0f} ms {divisions:>12} {1000 * best:>7.1f} ms "
                  f"{messages:>8} {1e6 * best / max(messages, 1):>10.0f}", flush=True)
    games = sorted(r[2] for r in rows)
    print(f"N={SIZES[-1]} over seeds {', '.join(map(str, args.seeds))}: generate <= "
          f"{max(r[0] for r in rows):.2f} s, score <= {max(r[1] for r in rows):.2f} s, "
          f"IMAP game {1000 * games[len(games) // 2]:.1f} ms (median)")


if __name__ == "__main__":
    main()
