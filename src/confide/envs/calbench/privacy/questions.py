"""Asking a model for belief deltas (the CalBench paper §F.3 reflection, I.2 judge): the prompt
files, the transcript of what one agent was delivered in one round, and the structured
call with its repair loop.

Prompts live in `prompts/*.md` (our own words, versioned by `PROMPT_VERSION`) and are
filled with `string.Template` (`$name`), so JSON braces in them need no escaping. A
transcript lists, in delivery order, every message the postbox delivered to the agent in
that round -- direct messages, participant-groupchat and all-agent posts -- with its text
and, for typed reference-protocol messages, its JSON payload; nothing the agent did not
receive can appear in it (the postbox's recipient list is the only source).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from confide.core.message import Message
from confide.core.trace import MessageDelivered
from confide.envs.calbench.actions import agent_of, seat_of
from confide.envs.calbench.privacy.deltas import (
    DELTA_LIMIT,
    answer_deltas,
    delta_schema,
    target_field,
)
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured
from confide.llm.prompts import PromptFiles

PROMPT_VERSION = "calbench-deltas-v1"
DEFAULT_ATTEMPTS = 3
"""Calls per question, the first included (the repair loop of confide.llm)."""


PROMPTS = PromptFiles("confide.envs.calbench.privacy", suffix=".md", folder="prompts")
render = PROMPTS.render
"""Prompt file `name` with `$fields` filled (a missing field is a `PromptError`)."""


def _agents(agents: Iterable[int]) -> str:
    return ", ".join(str(a) for a in agents)


def targets_of(num_agents: int, observer: int) -> list[int]:
    """The agents `observer` is asked about: every other agent, in order."""
    return [t for t in range(num_agents) if t != observer]


def game_fields(num_agents: int, num_slots: int) -> dict[str, object]:
    """Fields every prompt about a game uses."""
    return {"agents": _agents(range(num_agents)), "num_slots": num_slots,
            "last_slot": num_slots - 1}


def answer_format(targets: Sequence[int], num_slots: int) -> str:
    """The scale and the exact JSON shape of an answer."""
    example = {target_field(t): [0] * num_slots for t in targets[:1]}
    shape = json.dumps(example)[:-1] + (", ...}" if len(targets) > 1 else "}")
    return render(
        "delta_answer",
        keys=", ".join(f'"{target_field(t)}"' for t in targets),
        num_slots=num_slots,
        example=shape,
    )


def delivered(events: Iterable[object], recipient: int, round_index: int) -> list[Message]:
    """Messages delivered to `recipient` in round `round_index`, in delivery order."""
    seat = seat_of(recipient)
    return [
        e.message
        for e in events
        if isinstance(e, MessageDelivered)
        and e.message.round == round_index
        and seat in e.message.recipients
    ]


def _channel(message: Message) -> str:
    if message.channel.kind == "dm":
        return "direct message"
    if message.channel.kind == "group":
        return f"participant groupchat ({message.channel.name})"
    return "all-agent groupchat"


def transcript(messages: Sequence[Message], observer: int, round_index: int) -> str:
    """The numbered transcript of `messages` as shown to a model."""
    lines = []
    for number, m in enumerate(messages, start=1):
        body = m.text or ""
        if m.payload is not None:
            data = json.dumps(m.payload, sort_keys=True)
            body = f"{body} [data: {data}]" if body else f"[data: {data}]"
        lines.append(
            f"[{number}] turn {m.turn + 1}, from agent {agent_of(m.sender)}, {_channel(m)}: {body}"
        )
    return render(
        "transcript",
        observer=observer,
        round=round_index + 1,  # rounds and turns are shown 1-based, as in the game prompts
        lines="\n".join(lines) if lines else "(no messages)",
    )


@dataclass(frozen=True)
class DeltaReply:
    """A model's answer: deltas per target (None when the repair loop gave up)."""

    deltas: dict[int, tuple[int, ...]] | None
    attempts: int
    error: str | None


async def ask_deltas(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    targets: Sequence[int],
    num_slots: int,
    *,
    max_attempts: int = DEFAULT_ATTEMPTS,
    config: GenerateConfig | None = None,
) -> DeltaReply:
    """One structured question; bad replies are repaired, then reported, never raised."""
    schema = delta_schema(tuple(targets), num_slots)
    result = await generate_structured(
        model, messages, schema, config=config or GenerateConfig(), max_attempts=max_attempts
    )
    if result.ok and result.value is not None:
        return DeltaReply(answer_deltas(result.value, targets), len(result.attempts), None)
    return DeltaReply(None, len(result.attempts), result.error)


__all__ = [
    "DEFAULT_ATTEMPTS",
    "DELTA_LIMIT",
    "PROMPT_VERSION",
    "DeltaReply",
    "answer_format",
    "ask_deltas",
    "delivered",
    "game_fields",
    "render",
    "targets_of",
    "transcript",
]
