"""Play and score, kept apart.

An episode is first *played*: participants act and everything that happens goes into its
trace. It is then *scored* by the benchmark's score function, which reads nothing but the
trace recorded so far (`ctx.trace.events`), the task and the role bindings (the judge):
whatever the play phase knew in memory it must find again in the trace. A `ScoringStart`
event separates the two parts, so a stored trace can be cut back to its played part and
scored again under another judge (`confide rescore`) by the very function a live run
uses; a live run and a rescore therefore cannot diverge.

Inside a score function `ctx.trace` holds the played events, the marker and whatever the
scorer has emitted so far (judge calls, verdicts); `ctx.model_for` records calls there.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from confide.core.benchmark import EpisodeContext, EpisodeResult
from confide.core.trace import ScoringStart, TraceEvent

PlayFn = Callable[[EpisodeContext], Coroutine[Any, Any, None]]
"""Plays one episode into `ctx.trace`."""
ScoreFn = Callable[[EpisodeContext], Coroutine[Any, Any, EpisodeResult]]
"""Scores the episode played into `ctx.trace` (module docstring)."""
EpisodeFn = Callable[[EpisodeContext], Coroutine[Any, Any, EpisodeResult]]


async def score_played(ctx: EpisodeContext, score: ScoreFn) -> EpisodeResult:
    """Mark the end of play in `ctx.trace`, then score."""
    ctx.trace.emit(ScoringStart(roles=dict(sorted(ctx.roles.items()))))
    return await score(ctx)


def play_then_score(play: PlayFn, score: ScoreFn) -> EpisodeFn:
    """The `run_episode` of a benchmark whose episodes are played by `play` and scored by
    `score` (its `BenchmarkSpec.score_episode`)."""

    async def run_episode(ctx: EpisodeContext) -> EpisodeResult:
        await play(ctx)
        return await score_played(ctx, score)

    return run_episode


def played_part(events: Sequence[TraceEvent]) -> list[TraceEvent] | None:
    """The events before the `ScoringStart` marker, or None when there is none (a trace
    written before play and score were separate)."""
    for index, event in enumerate(events):
        if isinstance(event, ScoringStart):
            return list(events[:index])
    return None
