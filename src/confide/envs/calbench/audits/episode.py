"""What CalBench adds to every episode once its game is over (calbench.md I.2, D.4): the
judge cases when a judge role is bound, and the leaderboard columns of each seat row.

`measured(score_game)` wraps the environment's score function, so the benchmark spec
scores with `measured(score_game)` (live and in `confide rescore`): the judge reads the
played trace (its cases are recorded before the runner writes the footer), then every
result row gets
`game_id`, `is_reference`, `coordination`, `excess_cost` and `excess_vps`
(leaderboard.py), which is what `confide leaderboard` reads from results.csv.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from confide.core.benchmark import EpisodeContext, EpisodeResult, expand_lineup
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.audits.leaderboard import leaderboard_columns
from confide.envs.calbench.privacy.judge_vps import judge_episode
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError

EpisodeFn = Callable[[EpisodeContext], Coroutine[Any, Any, EpisodeResult]]


def measured(score: EpisodeFn) -> EpisodeFn:
    """`score` followed by the judge (if bound) and the leaderboard columns."""

    async def run(ctx: EpisodeContext) -> EpisodeResult:
        result = await score(ctx)
        scenario = ctx.task
        if not isinstance(scenario, Scenario):
            raise ConfideError(f"calbench: task must be a Scenario, got {type(scenario).__name__}")
        await judge_episode(ctx, scenario)
        binding = expand_lineup(ctx.lineup, [seat_of(a) for a in range(scenario.num_agents)])
        success = {int(r["agent"]): r.get("success") for r in result.rows}
        columns = leaderboard_columns(
            scenario, ctx.trace.events, success, binding, ctx.episode_id
        )
        result.rows = [{**row, **columns[int(row["agent"])]} for row in result.rows]
        return result

    return run
