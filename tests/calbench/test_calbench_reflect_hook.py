"""The post-round reflection hook built from an episode context: one recorded model per
model seat with purpose "reflection", threads of seats that expose one, concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

from test_calbench_reflect_support import Threaded, reply, script, task

from confide.core.benchmark import EpisodeContext, SeatSpec, expand_lineup, parse_lineup
from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.calbench import events as cal
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.engine import Game
from confide.envs.calbench.privacy.reflection import PURPOSE, reflection_hook
from confide.llm import ChatMessage, GenerateConfig, MockModel

ZERO = {0: reply({1: [0] * 4, 2: [0] * 4}), 1: reply({0: [0] * 4, 2: [0] * 4})}


class Factory:
    """Records what the hook asked for and serves mock models that keep their prompts."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self.asked: list[tuple[str, str | None, str]] = []
        self.prompts: dict[str, list[list[ChatMessage]]] = {}
        self.latency_s = latency_s

    def __call__(self, spec: str, *, seat: str | None, purpose: str, trace: Any) -> MockModel:
        self.asked.append((spec, seat, purpose))
        assert seat is not None
        agent = int(seat.removeprefix("agent"))

        def answer(messages: list[ChatMessage], config: GenerateConfig) -> str:
            self.prompts.setdefault(seat, []).append(messages)
            return ZERO[agent]

        return MockModel(answer, name=seat, latency_s=self.latency_s)


def _ctx(factory: Factory, lineup: str) -> tuple[EpisodeContext, dict[str, SeatSpec]]:
    ctx = EpisodeContext(
        episode_id="e", task=task(), lineup=parse_lineup(lineup), seed=0,
        trace=TraceRecorder("e"), model_factory=factory,
    )
    return ctx, expand_lineup(ctx.lineup, [seat_of(a) for a in range(3)])


def test_hook_asks_only_model_seats_with_their_threads() -> None:
    factory = Factory()
    ctx, binding = _ctx(factory, "mock/x:variant,mock/y,imap")
    players = {seat_of(a): Threaded(script(a), name=f"s{a}") for a in range(3)}
    hook = reflection_hook(ctx, task(), binding, players)
    assert hook is not None
    assert factory.asked == [("mock/x", "agent0", PURPOSE), ("mock/y", "agent1", PURPOSE)]
    asyncio.run(Game(task(), players, ctx.trace, after_round=hook).play())
    reflections = [
        e for e in ctx.trace.events if isinstance(e, EnvEvent) and e.name == "reflection"
    ]
    assert [(e.round, e.seat, e.data.context) for e in reflections] == [
        (0, "agent0", "thread"), (0, "agent1", "thread"),
        (1, "agent0", "thread"), (1, "agent1", "thread"),
    ]
    first = factory.prompts["agent0"][0]
    assert first[0].content == "thread of s0" and len(first) == 2
    # measurement only: the seat's own thread is untouched
    assert len(players["agent0"].reflection_context()) == 1


def test_no_hook_without_model_seats() -> None:
    ctx, binding = _ctx(Factory(), "imap")
    assert reflection_hook(ctx, task(), binding, {}) is None


def test_observers_reflect_concurrently() -> None:
    factory = Factory(latency_s=0.5)
    ctx, binding = _ctx(factory, "mock/x,mock/y,imap")
    hook = reflection_hook(ctx, task(), binding, {})
    assert hook is not None
    ctx.trace.emit(cal.RoundStart(round=0, data=cal.RoundStartData(
        meeting=cal.MeetingInfo(meeting_id=1, participants=[0, 1, 2], cost=1),
        speaker_order=[0, 1, 2])))

    async def timed() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await hook(0)
        return loop.time() - start

    assert asyncio.run(timed()) < 0.9  # two 0.5 s calls overlapped (in turn: >= 1.0)
