"""What CalBench adds to every episode once its game is over (the CalBench paper I.2, D.4): the
judge cases when a judge role is bound, and the leaderboard columns of each seat row.

`measured(score_game)` wraps the environment's score function: it is `env.score_episode`,
the spec's scorer (live and in `confide rescore`): the judge reads the
played trace (its cases are recorded before the runner writes the footer), then every
result row gets
`game_id`, `is_reference`, `coordination`, `excess_cost` and `excess_vps`
(leaderboard.py), which is what `confide leaderboard` reads from results.csv. The game's
protocol VPS is computed here once, with its F.5 rows, and with every other table row of
the game rides on the result (`EpisodeResult.tables`, audits/scored.py `ScoredGame`), so
the run's output phase never reads the trace back. (Outside a run, with no trace path or
no header, there are no tables: the runner computes them from the trace if it has one.)
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from confide.core.benchmark import EpisodeContext, EpisodeResult, expand_lineup
from confide.core.trace import EpisodeEnd, EpisodeStart, Trace
from confide.core.trusted import builder
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.audits.leaderboard import leaderboard_columns
from confide.envs.calbench.audits.scored import scored_game
from confide.envs.calbench.judge import judge_episode
from confide.envs.calbench.privacy.vps import vps_rows
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
        events = ctx.trace.events
        header = events[0] if events and isinstance(events[0], EpisodeStart) else None
        body = events[1:] if header is not None else events  # as the trace file reads
        vps = vps_rows(scenario, body, trace_path=ctx.trace_path, game_id=ctx.episode_id)
        columns = leaderboard_columns(
            scenario, body, success, binding, ctx.episode_id, vps.excess_by_seat()
        )
        result.rows = [{**row, **columns[int(row["agent"])]} for row in result.rows]
        if header is not None and ctx.trace_path:
            trace = Trace.model_construct(
                path=ctx.trace_path, header=header, events=body,
                footer=builder(EpisodeEnd)(status="ok", rows=result.rows),
            )
            result.tables = scored_game(trace, scenario, vps)
        return result

    return run
