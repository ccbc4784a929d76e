"""The base context every LLM strategy shares (section 5.3, A.9), and the per-turn prompt.

All strategies give the model the same card -- role, situation, primary objective,
pre-interaction knowledge with sensitivity labels, sharing policy, participants and the
knowledge domain map -- and the same perspective-filtered history (only messages the
agent sent or received); they differ only in the guidance appended to the card and in
the notes (coach advice, belief or planning state) added to the turn prompt.

Prompts that keep their prefix: an acting call is the system prompt (the card
and the guidance, fixed for the episode) and one user message that starts with the
history in delivery order, which only grows from turn to turn, and ends with what
changes every turn: the round and turn counters, who is still present, where the
messages new since the agent's last turn start, the strategy's notes, the environment's
feedback and the request for an action. So each call's prompt starts with the whole
history part of the previous one, which a provider's prompt cache serves. The
information is the paper's (sections 5.3, A.9: the shared card and the
perspective-filtered history, plus each strategy's notes) in the same wording; only the
order changed (the counters moved from the top to the end, and the "new since your last
turn" line, which used to sit inside the history, now names the first new message at the
end, and the fixed reply-format line moved to the end of the system prompt). The reply's
JSON schema is not written into the prompt: `generate_structured`
sends it once per request, as the response format or, on an endpoint without one,
appended to the end of the last user turn (`confide.llm.structured_output`).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def render_history(messages: Sequence[Message], me: str) -> str:
    """The agent's history, one line per message in delivery order."""
    if not messages:
        return "(nothing has been said yet)"
    return "\n".join(render_message(message, me) for message in messages)


def new_since(observation: InfoObservation) -> str:
    """Where the messages new since the agent's last turn start (empty when none are)."""
    if observation.first_new >= len(observation.history):
        return ""
    first = utterance_id(observation.history[observation.first_new])
    return f"New since your last turn: the messages from [{first}] on.\n"


def turn_prompt(observation: InfoObservation, notes: Sequence[str] = ()) -> str:
    """The user message of one acting call (prompts/turn.txt): the history first, in
    delivery order, then what changes every turn (module docstring)."""
    feedback = f"\nNOTE: {observation.feedback}\n" if observation.feedback else ""
    return render(
        "turn.txt",
        round=observation.round,
        turn=observation.turn,
        max_turns=observation.limits.max_turns,
        present=", ".join(observation.present),
        history=render_history(observation.history, observation.agent),
        new=new_since(observation),
        notes="".join(f"\n{note}\n" for note in notes),
        feedback=feedback,
    )
