"""Shared helpers for the Incognita environment tests (not a test module)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from confide.core.benchmark import BenchmarkSpec, EpisodeContext, EpisodeResult, Turns, parse_lineup
from confide.core.message import Message
from confide.core.trace import EnvEvent, MessageDelivered, TraceRecorder
from confide.envs.incognita.env import ServiceTask
from confide.registry import get_benchmark
from confide.runner.models import RunModels

MOCK = "mock/incognita"
MOCK_ROLES = {"customer": MOCK, "desk": MOCK, "judge": MOCK}
CONDITIONS = ("direct", "indirect", "social")


@cache
def spec() -> BenchmarkSpec:
    return get_benchmark("incognita")


@cache
def tasks() -> tuple[ServiceTask, ...]:
    return tuple(spec().load_tasks(None, None))


def task(card_id: str) -> ServiceTask:
    return next(t for t in tasks() if t.id == card_id)


@dataclass
class Run:
    result: EpisodeResult
    trace: TraceRecorder
    observations: dict[str, list[BaseModel]] = field(default_factory=dict)

    def env(self, name: str | None = None) -> list[EnvEvent]:
        return [e for e in self.trace.events
                if isinstance(e, EnvEvent) and name in (None, e.name)]

    @property
    def row(self) -> dict[str, Any]:
        return self.result.rows[0]

    @property
    def postbox_log(self) -> list[Message]:
        return [e.message for e in self.trace.events if isinstance(e, MessageDelivered)]


def run(
    the_task: ServiceTask,
    condition: str,
    lineup: str = "reference",
    *,
    roles: dict[str, str] | None = None,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    observe: bool = False,
    models: Any = None,
) -> Run:
    """One episode in memory; with `observe`, every observation is kept (not copied)."""
    trace = TraceRecorder("test")
    seen: dict[str, list[BaseModel]] = defaultdict(list)
    ctx = EpisodeContext(
        episode_id="test",
        task=the_task,
        lineup=parse_lineup(lineup),
        seed=seed,
        trace=trace,
        model_factory=models or RunModels(),
        condition=condition,
        roles=dict(roles or {}),
        options=dict(options or {}),
        turns=Turns(observe=(lambda seat, obs: seen[seat].append(obs)) if observe else None),
    )
    result = asyncio.run(spec().run_episode(ctx))
    return Run(result=result, trace=trace, observations=dict(seen))
