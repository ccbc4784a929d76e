"""Every turn goes through core: over randomized episodes of every
registered benchmark, each call of a participant's `act` happens inside
`EpisodeContext.ask`, so the conformance checker saw every observation and action. An
environment that handed a participant an observation directly would make the counts
differ; the last test shows the count catches exactly that."""

from __future__ import annotations

import contextvars
import functools
import importlib
import inspect
import pkgutil
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import confide.envs
from confide.core.benchmark import BenchmarkSpec, EpisodeContext, EpisodeResult
from confide.registry import benchmark_ids, get_benchmark
from confide.testing import run_once

_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("act_depth", default=0)


def _participant_classes() -> Iterator[type]:
    """Every class in confide.envs that defines its own coroutine `act`."""
    for info in pkgutil.walk_packages(confide.envs.__path__, "confide.envs."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            act = cls.__dict__.get("act")
            if cls.__module__ == module.__name__ and inspect.iscoroutinefunction(act):
                yield cls


@pytest.fixture
def acts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts outermost participant `act` calls (a subclass calling `super().act` is one
    turn), whoever made them."""
    calls: list[str] = []

    def counting(act: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(act)
        async def wrapper(self: Any, observation: Any) -> Any:
            if _DEPTH.get() == 0:
                calls.append(type(self).__name__)
            token = _DEPTH.set(_DEPTH.get() + 1)
            try:
                return await act(self, observation)
            finally:
                _DEPTH.reset(token)

        return wrapper

    classes = list(_participant_classes())
    assert len(classes) >= 6, classes
    for cls in classes:
        monkeypatch.setattr(cls, "act", counting(cls.__dict__["act"]))
    return calls


def _episodes(spec: BenchmarkSpec, rng: random.Random, count: int) -> Iterator[dict[str, Any]]:
    tasks = spec.load_tasks(None, None)
    for _ in range(count):
        yield {
            "task": rng.choice(tasks),
            "lineup": rng.choice([spec.default_lineup, *spec.participants]),
            "seed": rng.randrange(1_000),
            "condition": rng.choice(spec.conditions),
        }


@pytest.mark.parametrize("benchmark_id", benchmark_ids())
def test_every_act_is_an_ask(benchmark_id: str, acts: list[str]) -> None:
    spec = get_benchmark(benchmark_id)
    rng = random.Random(f"turns-{benchmark_id}")
    for episode in _episodes(spec, rng, 3):
        before = len(acts)
        try:
            capture = run_once(spec, episode.pop("task"), episode.pop("lineup"), **episode)
        except Exception as exc:  # a reference that needs a model: not this test's concern
            if "model factory" in str(exc):
                continue
            raise
        asked = capture.asks
        answered = sum(len(v) for v in capture.actions.values())
        assert asked > 0
        assert len(acts) - before == asked == answered, (benchmark_id, episode)


def test_a_bypassing_environment_is_caught(acts: list[str]) -> None:
    """Mutation check: the demo relay with one observation handed to a participant
    directly (not through ctx.ask) shows one more act than asks."""
    from confide.envs.demo import SPEC, env
    from confide.envs.demo.participants import ScriptedRelay

    async def bypassing(ctx: EpisodeContext) -> EpisodeResult:
        result = await env.run_episode(ctx)
        seat = ctx.task.seats[0]
        await ScriptedRelay(seat, random.Random(0)).act(env.DemoObservation(
            seat=seat, private_note="", round=0, next_seat=seat, new_messages=[]))
        return result

    spec = BenchmarkSpec(**{**SPEC.__dict__, "run_episode": bypassing})
    capture = run_once(spec, spec.load_tasks(None, None)[0], "scripted")
    assert len(acts) == capture.asks + 1
