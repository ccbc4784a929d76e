"""The base context every LLM strategy shares (section 5.3, A.9), and the per-turn prompt.

All strategies give the model the same card -- role, situation, primary objective,
pre-interaction knowledge with sensitivity labels, sharing policy, participants and the
knowledge domain map -- and the same perspective-filtered history (only messages the
agent sent or received); they differ only in the guidance appended to the card and in
the notes (coach advice, belief or planning state) added to the turn prompt.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

from pydantic import BaseModel

from confide.core.message import Message
from confide.envs.sotopia_tom.actions import (
    Briefing,
    InfoObservation,
    TurnLimits,
    is_public,
    utterance_id,
)
from confide.envs.sotopia_tom.prompts import render


def render_card(briefing: Briefing, limits: TurnLimits) -> str:
    """The shared system context (prompts/base.txt) for one agent; the limits it states
    are the ones the environment enforces."""

    def labels(ids: Sequence[str]) -> str:
        return "; ".join(f"{briefing.fact(i).label} ({i})" for i in ids) or "nothing"

    knowledge = "\n".join(
        f"- {f.id} | {f.label} | {f.value} | {f.sensitivity.value}" for f in briefing.knowledge
    )
    members = "\n".join(
        f"- {m.name} | {m.role}" + (" (you)" if m.name == briefing.name else "")
        for m in briefing.members
    )
    domain_map = "\n".join(
        f"- {domain} -> {', '.join(roles)}" for domain, roles in briefing.domain_map.items()
    )
    return render(
        "base.txt",
        name=briefing.name,
        role=briefing.role,
        sector=briefing.sector or "unspecified",
        description=briefing.description,
        shared_goal=briefing.shared_goal,
        objective=briefing.primary_objective,
        knowledge=knowledge or "- (nothing)",
        share=labels(briefing.share),
        withhold=labels(briefing.withhold),
        members=members,
        domain_map=domain_map or "- (no map given)",
        max_turns=limits.max_turns,
        stale_turns=limits.stale_turns,
        leave_rule=LEAVE_RULES[limits.leave_ends],
    )


LEAVE_RULES = {
    "any": "as soon as anyone leaves",
    "all": "once everyone has left",
}


def render_message(message: Message, me: str) -> str:
    """One history line from `me`'s point of view."""
    speaker = "You" if message.sender == me else message.sender
    if is_public(message):
        route = "(public)"
    else:
        names = ["you" if n == me else n for n in message.recipients]
        route = f"-> {', '.join(names)} (private)"
    text = " ".join((message.text or "").split())
    return f"[{utterance_id(message)}] {speaker} {route}: {text}"


def render_history(messages: Sequence[Message], me: str, first_new: int | None = None) -> str:
    """The agent's history, marking where the messages new since its last turn start."""
    if not messages:
        return "(nothing has been said yet)"
    lines = []
    for index, message in enumerate(messages):
        if first_new is not None and index == first_new:
            lines.append("--- new since your last turn ---")
        lines.append(render_message(message, me))
    return "\n".join(lines)


@functools.cache
def schema_text(schema: type[BaseModel]) -> str:
    """The JSON schema a reply must follow, compact (built once per reply type: pydantic
    builds a schema slowly, and every turn prompt carries one)."""
    return json.dumps(schema.model_json_schema(), separators=(",", ":"))


def turn_prompt(
    observation: InfoObservation, schema: type[BaseModel], notes: Sequence[str] = ()
) -> str:
    """The user message of one acting call (prompts/turn.txt)."""
    first_new = observation.first_new if observation.first_new < len(observation.history) else None
    feedback = f"\nNOTE: {observation.feedback}\n" if observation.feedback else ""
    return render(
        "turn.txt",
        round=observation.round,
        turn=observation.turn,
        max_turns=observation.limits.max_turns,
        present=", ".join(observation.present),
        history=render_history(observation.history, observation.agent, first_new),
        notes="".join(f"\n{note}\n" for note in notes),
        feedback=feedback,
        schema=schema_text(schema),
    )
