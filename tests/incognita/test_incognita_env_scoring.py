"""Evaluation reads the final world from the trace: the hash of the last
executed write is the hash of the world the episode left, for every reference card and
condition, so `score_episode` needs no state from play."""

from __future__ import annotations

import asyncio

from _incognita_env_support import CONDITIONS, tasks

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.incognita.env import Episode, final_hash
from confide.envs.incognita.options import EnvOptions
from confide.runner.models import RunModels


def test_final_hash_from_the_trace_is_the_played_worlds() -> None:
    writes = 0
    for task in tasks()[:6]:
        for condition in CONDITIONS:
            trace = TraceRecorder()
            ctx = EpisodeContext(episode_id="t", task=task, lineup=parse_lineup("reference"),
                                 seed=0, trace=trace, model_factory=RunModels(),
                                 condition=condition)
            episode = Episode(ctx, task, EnvOptions())
            asyncio.run(episode.run())
            assert final_hash(task, trace.events) == episode.world.state_hash()
            writes += sum(1 for e in trace.events if isinstance(e, EnvEvent)
                          and e.name == "tool_executed" and e.data.kind == "write")
    assert writes > 0  # some episodes did change the world
