"""Reflection-calibrated VPS: measurement-only reflection calls after every round
(the CalBench paper §F.3, section 3.2; Table 1 "Excess cal. VPS").

After each round every LLM seat (observer) is asked, for every other agent (target) and
every slot, how its belief that the slot is occupied changed during the round, as signed
integers in {-3..3} under a strict JSON schema (deltas.py) with the repair loop of
`confide.llm.generate_structured`. The calls of different observers run concurrently.
They are measurement only: the question and the answer are never added to the agent's
conversation (the paper's record_history=false), they go to the model through
`ctx.model_for(seat, spec, "reflection")` (so each call is recorded in the trace with
purpose "reflection"), and each answer is recorded as a `Reflection` event with
`visible_to=None` (no seat observes it). The calls ask for token log probabilities
(`REFLECTION_CONFIG`, as F.3 allows), which providers that give them record with the
call. An answer still unreadable after the repair loop is recorded with `ok` false and
counts as missing, never as zero belief change (deltas.py). Conversion, calibration, the
five-slot floor and the per-game-target excess are in deltas.py; `reflection_vps` reads
them back from a trace.

What the observer is asked from: a seat that keeps a conversation thread exposes it
through `ReflectiveSeat.reflection_context()` and the question is appended to a copy of
that thread (the agent answers with everything it has seen, as in the paper). A model
seat without a thread is asked from a self-contained prompt: who it is, the transcript of
the messages delivered to it in the round, and the question. The event records which
(`context`: "thread" or "transcript").

Prompt prefix: a check-in starts with the seat's whole thread, which its turn
requests already sent. An earlier check-in's question and answer are not carried into the
next check-in either: F.3 keeps these calls out of every later context ("record_history=
false ... not inserted into later game context"), and an observer that saw its earlier
reports could anchor on them, which would change what the measure reads. Under a cache
that puts the response schema first (OpenAI), a check-in, whose schema differs from the
turns', reuses only the previous check-in's prefix (`bench/prompt_cache.py` shows both).

Engine wiring: `Game(..., after_round=hook)` awaits `hook(round_index)` after each round's
resolution; `reflection_hook(ctx, scenario, binding, players)` builds that hook for the
model seats of a lineup (None when no seat is a model).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Protocol, runtime_checkable

from confide.core.benchmark import EpisodeContext, SeatSpec
from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.calbench import events as ev
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.privacy.deltas import answer_event, answered, model_vps
from confide.envs.calbench.privacy.questions import (
    DEFAULT_ATTEMPTS,
    PROMPT_VERSION,
    DeltaReply,
    answer_format,
    ask_deltas,
    delivered,
    game_fields,
    render,
    targets_of,
    transcript,
)
from confide.envs.calbench.scenario import Scenario
from confide.llm import ChatMessage, ChatModel, GenerateConfig

EVENT = ev.Reflection
PURPOSE = "reflection"
REFLECTION_CONFIG = GenerateConfig(logprobs=True)
"""Reflection answers ask for token log probabilities (F.3 allows them); providers that
give them record them with the call in the trace, the others answer without."""


@runtime_checkable
class ReflectiveSeat(Protocol):
    """A seat with a conversation thread the reflection question can follow."""

    def reflection_context(self) -> Sequence[ChatMessage]:
        """The thread so far (system prompt first). The caller only reads it."""
        ...


def reflection_messages(
    scenario: Scenario,
    events: Sequence[object],
    observer: int,
    round_index: int,
    thread: Sequence[ChatMessage] | None,
) -> list[ChatMessage]:
    """The reflection prompt of `observer` after round `round_index` (module docstring)."""
    targets = targets_of(scenario.num_agents, observer)
    fields = game_fields(scenario.num_agents, scenario.num_slots)
    question = "\n\n".join([
        render("reflection_lead", round=round_index + 1,
               targets=", ".join(map(str, targets)), **fields),
        answer_format(targets, scenario.num_slots),
    ])
    if thread is not None:
        return [*thread, ChatMessage(role="user", content=question)]
    seen = transcript(delivered(events, observer, round_index), observer, round_index)
    return [
        ChatMessage(role="system", content=render("observer_system", observer=observer, **fields)),
        ChatMessage(role="user", content=f"{seen}\n\n{question}"),
    ]


async def reflect_round(
    scenario: Scenario,
    round_index: int,
    models: Mapping[str, ChatModel],
    events: Sequence[object],
    emit: Callable[[EnvEvent], None],
    *,
    threads: Mapping[str, Sequence[ChatMessage]] | None = None,
    max_attempts: int = DEFAULT_ATTEMPTS,
    config: GenerateConfig | None = None,
) -> list[DeltaReply]:
    """Ask every observer seat in `models` (concurrently) and emit one "reflection" event
    per observer, in agent order. Returns the replies in that order."""
    seats = sorted(models, key=agent_of)
    threads = threads or {}
    targets = {s: targets_of(scenario.num_agents, agent_of(s)) for s in seats}
    prompts = {
        s: reflection_messages(scenario, events, agent_of(s), round_index, threads.get(s))
        for s in seats
    }
    replies = await asyncio.gather(*(
        ask_deltas(models[s], prompts[s], targets[s], scenario.num_slots,
                   max_attempts=max_attempts, config=config)
        for s in seats
    ))
    for seat, reply in zip(seats, replies, strict=True):
        emit(answer_event(
            EVENT, round_index, agent_of(seat), reply.deltas,
            context="thread" if seat in threads else "transcript",
            attempts=reply.attempts, error=reply.error, prompt_version=PROMPT_VERSION,
        ))
    return list(replies)


class RoundReflection:
    """The engine's post-round hook: reflect every model seat after each round."""

    def __init__(
        self,
        scenario: Scenario,
        trace: TraceRecorder,
        models: Mapping[str, ChatModel],
        players: Mapping[str, object],
        *,
        max_attempts: int = DEFAULT_ATTEMPTS,
        config: GenerateConfig | None = None,
    ) -> None:
        self.scenario = scenario
        self.trace = trace
        self.models = dict(models)
        self.players = players
        self.max_attempts = max_attempts
        self.config = config or REFLECTION_CONFIG

    async def __call__(self, round_index: int) -> None:
        threads = {
            seat: list(player.reflection_context())
            for seat, player in self.players.items()
            if seat in self.models and isinstance(player, ReflectiveSeat)
        }
        await reflect_round(
            self.scenario, round_index, self.models, self.trace.events, self.trace.emit,
            threads=threads, max_attempts=self.max_attempts, config=self.config,
        )


def reflection_hook(
    ctx: EpisodeContext,
    scenario: Scenario,
    binding: Mapping[str, SeatSpec],
    players: Mapping[str, object],
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
) -> RoundReflection | None:
    """The post-round hook for the model seats of `binding` (None if there are none)."""
    models = {
        seat: ctx.model_for(seat, spec.model, PURPOSE)
        for seat, spec in binding.items()
        if spec.model is not None
    }
    if not models:
        return None
    return RoundReflection(scenario, ctx.trace, models, players, max_attempts=max_attempts)


reflection_vps = partial(model_vps, kind=EVENT)
"""Reflection-calibrated VPS rows of one game (F.3) from its trace events:
``reflection_vps(scenario, events, *, trace_path="", game_id=None, floor=VPS_FLOOR)``."""

has_reflections = partial(answered, kind=EVENT)
"""``has_reflections(events)``: whether a game recorded any reflection answer."""


__all__ = [
    "EVENT",
    "PURPOSE",
    "ReflectiveSeat",
    "RoundReflection",
    "has_reflections",
    "reflect_round",
    "reflection_hook",
    "reflection_messages",
    "reflection_vps",
]
