"""Judge VPS: an external model audits what each recipient could infer (the CalBench paper I.2-I.4).

One judge case per (round, recipient) that was delivered at least one message in the
round: the judge reads exactly those messages (direct, participant-groupchat and
all-agent posts; privacy/questions.py builds the transcript from the postbox's recipient lists,
so nothing undelivered can reach it) and emits, for every other agent and every slot, a
signed belief delta in {-3..3} under the same strict schema and repair loop as the
reflection (privacy/deltas.py). A recipient that received nothing in a round has no case: the
judge would have no evidence, and its belief cannot have moved. Cases of one game are
judged concurrently. Raw and calibrated judge VPS, truth-direction precision and the
excess over the five-slot floor come from privacy/deltas.py exactly as for the reflection.

The judge model is bound by role (`--role judge=openai/gpt-5`, `ctx.roles["judge"]`), or
given directly for a post-hoc audit of stored traces. In-episode, `judge_episode` records
each case as a `JudgeCase` event (visible_to None; its calls are recorded with
purpose "judge-vps"), so the run's write_outputs hook can build the tables from the
traces. Post hoc, `judge_trace_vps(trace, scenario, model)` does the same without
touching the trace.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial

from confide.core.benchmark import EpisodeContext
from confide.core.message import Message
from confide.core.trace import MessageDelivered, Trace
from confide.envs.calbench import events as ev
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.privacy.deltas import ModelVps, answer_event, model_vps
from confide.envs.calbench.privacy.questions import (
    DEFAULT_ATTEMPTS,
    PROMPT_VERSION,
    answer_format,
    ask_deltas,
    game_fields,
    render,
    targets_of,
    transcript,
)
from confide.envs.calbench.privacy.vps import VPS_FLOOR
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError
from confide.llm import ChatMessage, ChatModel, GenerateConfig

EVENT = ev.JudgeCase
PURPOSE = "judge-vps"
ROLE = "judge"


Case = tuple[int, int, list[Message]]
"""(round, recipient, the messages delivered to it in that round)."""


def judge_cases(scenario: Scenario, events: Sequence[object]) -> list[Case]:
    """(round, recipient, delivered messages) for every recipient with messages, in
    (round, recipient) order."""
    cases: dict[tuple[int, int], list[Message]] = {}
    for event in events:
        if isinstance(event, MessageDelivered):
            for seat in event.message.recipients:
                cases.setdefault((event.message.round, agent_of(seat)), []).append(event.message)
    return [(r, a, cases[r, a]) for r, a in sorted(cases) if 0 <= r < len(scenario.meetings)]


def judge_messages(
    scenario: Scenario, observer: int, round_index: int, messages: Sequence[Message]
) -> list[ChatMessage]:
    """The judge prompt of one case."""
    targets = targets_of(scenario.num_agents, observer)
    fields = game_fields(scenario.num_agents, scenario.num_slots)
    question = "\n\n".join([
        transcript(messages, observer, round_index),
        render("judge_lead", targets=", ".join(map(str, targets)), **fields),
        answer_format(targets, scenario.num_slots),
    ])
    return [
        ChatMessage(
            role="system",
            content=render("judge_system", observer=observer, round=round_index + 1, **fields),
        ),
        ChatMessage(role="user", content=question),
    ]


async def judge_game(
    scenario: Scenario,
    events: Sequence[object],
    model: ChatModel,
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
    config: GenerateConfig | None = None,
) -> list[ev.JudgeCase]:
    """Judge every case of one game (concurrently); one "judge_case" event per case, in
    (round, recipient) order."""
    cases = judge_cases(scenario, events)
    replies = await asyncio.gather(*(
        ask_deltas(
            model,
            judge_messages(scenario, observer, rnd, messages),
            targets_of(scenario.num_agents, observer),
            scenario.num_slots,
            max_attempts=max_attempts,
            config=config,
        )
        for rnd, observer, messages in cases
    ))
    return [
        answer_event(
            EVENT, rnd, observer, reply.deltas, judge=model.name,
            message_ids=[m.id for m in messages], attempts=reply.attempts,
            error=reply.error, prompt_version=PROMPT_VERSION,
        )
        for (rnd, observer, messages), reply in zip(cases, replies, strict=True)
    ]


def judge_spec(ctx: EpisodeContext) -> str | None:
    """The judge model bound to this episode, or None."""
    spec = ctx.roles.get(ROLE)
    if spec is None:
        return None
    if "/" not in spec:
        raise ConfideError(
            f"calbench: --role judge={spec!r} is not a model spec such as openai/gpt-5"
        )
    return spec


async def judge_episode(ctx: EpisodeContext, scenario: Scenario) -> int:
    """Judge the finished game in `ctx.trace` when a judge is bound; returns the number
    of cases recorded (0 without a judge)."""
    spec = judge_spec(ctx)
    if spec is None:
        return 0
    model = ctx.model_for(None, spec, PURPOSE, role=ROLE)
    judged = await judge_game(scenario, list(ctx.trace.events), model)
    for event in judged:
        ctx.trace.emit(event)
    return len(judged)


judge_vps = partial(model_vps, kind=EVENT)
"""Judge VPS rows of one game from the "judge_case" events among its events:
``judge_vps(scenario, events, *, trace_path="", game_id=None, floor=VPS_FLOOR)``."""


async def judge_trace_vps(
    trace: Trace, scenario: Scenario, model: ChatModel, *, floor: float = VPS_FLOOR
) -> ModelVps:
    """Post-hoc judge VPS of a stored trace (its own judge events, if any, are ignored)."""
    events = [e for e in trace.events if not isinstance(e, EVENT)]
    judged = await judge_game(scenario, events, model)
    return judge_vps(scenario, [*events, *judged], trace_path=trace.path,
                     game_id=trace.header.episode_id, floor=floor)


__all__ = [
    "EVENT",
    "PURPOSE",
    "ROLE",
    "judge_cases",
    "judge_episode",
    "judge_game",
    "judge_messages",
    "judge_spec",
    "judge_trace_vps",
    "judge_vps",
]
