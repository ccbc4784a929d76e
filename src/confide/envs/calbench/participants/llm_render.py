"""Observation -> text for the CalBench LLM agent (the CalBench paper §A.2 system prompt, A.3
per-round user messages), from the prompt files in `confide.envs.calbench.prompts`.

Everything rendered comes from the seat's own observation: its own calendar render
(`CalendarView.text`, which carries only the labels A.1 lets the owner see), the meeting
as this seat may see it (its private label only for participants) and the messages the
postbox delivered to it. Nothing else reaches a prompt.

Message selection follows A.3 Table 4: a participant's first CHEAP_TALK turn of a round
gets the round-start message, later turns the turn message (its inbox, or "no new
messages"; the last turn of the budget adds the closing instruction); a non-participant's
first turn in a round (it was contacted) gets `contacted`, our addition so that it knows
the meeting and its calendar before it answers; VOLUNTARY and DECISION requests get the
voluntary and decision messages, and every later attempt of the same batch the retry
message with the exact A.5 conflict strings. Tool calls the engine refused in the seat's
previous reply (a message on a closed channel, to an unknown agent or to itself, a
schedule during CHEAP_TALK, a message in a batch) open the next message, one line each in
the shared refusal wording (`confide.core.refusal`; our addition, as A.5 words only batch
conflicts).

Decided by the text: turns are numbered from 1 (A.3's budget line reads "turn 1 of N"),
and so are rounds (A.3's "=== ROUND N START ===" header; we count rounds like turns); the
DECISION and VOLUNTARY messages list no messages (A.3: meeting metadata and a calendar
snapshot); a message carrying a typed payload (a reference protocol in a mixed lineup) is
shown as its compact JSON, since D.4 makes typed JSON the whole of such a message and A.3
shows each incoming message as its "<content>".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from confide.core.message import Message
from confide.core.refusal import refusal
from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarObservation,
    ChannelName,
    CheapTalkObservation,
    RefusedAction,
    agent_of,
)
from confide.envs.calbench.prompts import SYSTEM_SECTIONS, Variant, load, render

CHANNEL_NOTES: dict[ChannelName, str] = {
    "dm": "Send private messages to one agent at a time with dm; the two group tools are refused.",
    "participant_groupchat": "Post with participant_groupchat to the current meeting's "
    "participants; dm and all_agent_groupchat are refused.",
    "all_agent_groupchat": "Post with all_agent_groupchat to every agent; dm and "
    "participant_groupchat are refused.",
}
_CHANNEL_LABELS = {
    "dm": "direct message",
    "group": "participants' group",
    "broadcast": "all-agent group",
}
_BLANK_RUNS = re.compile(r"\n{3,}")


def _agents(ids: Sequence[int]) -> str:
    return ", ".join(str(a) for a in ids)


def _tidy(text: str) -> str:
    """Drop the blank lines left by empty optional fields."""
    return _BLANK_RUNS.sub("\n\n", text).strip()


def system_prompt(
    *,
    agent: int,
    all_agents: Sequence[int],
    num_slots: int,
    channels: Sequence[ChannelName],
    decision_retries: int,
    variant: Variant | None = None,
) -> str:
    """The A.2 system prompt: nine sections, then the variant block if any."""
    channel = channels[0]
    retry_rule = (
        f"If a DECISION batch is rejected you may send it again, up to {decision_retries} "
        "more time(s)."
        if decision_retries
        else "A rejected DECISION batch cannot be sent again: get it right the first time."
    )
    values: dict[str, object] = {
        "agent": agent,
        "agents": _agents(all_agents),
        "num_agents": len(all_agents),
        "num_slots": num_slots,
        "last_slot": num_slots - 1,
        "channel": channel,
        "channel_note": CHANNEL_NOTES[channel],
        "retry_rule": retry_rule,
    }
    parts = [render(name, **values) for name in SYSTEM_SECTIONS]
    if variant is not None:
        parts.append(variant.text)
    return "\n\n".join(parts)


def render_message(message: Message, number: int) -> str:
    """One delivered message: sender, channel, round and content."""
    channel = _CHANNEL_LABELS[message.channel.kind]
    parts = [message.text] if message.text is not None else []
    if message.payload is not None:
        parts.append(json.dumps(message.payload, sort_keys=True, separators=(",", ":")))
    body = " ".join(parts)
    sender = agent_of(message.sender)
    return f"[{number}] From agent {sender} ({channel}, round {message.round + 1}): {body}"


def render_inbox(messages: Sequence[Message]) -> str:
    """The inbox block of a user message."""
    if not messages:
        return "No new messages in your inbox."
    lines = [render_message(m, i) for i, m in enumerate(messages, start=1)]
    return "Incoming messages:\n" + "\n".join(lines)


def _budget(obs: CheapTalkObservation) -> str:
    if obs.max_turns is None:
        return "This phase has no turn budget."
    left = obs.max_turns - obs.turn - 1
    return (
        f"Turn {obs.turn + 1} of at most {obs.max_turns} in this phase "
        f"({left} left after this one)."
    )


def _label_line(obs: CalendarObservation) -> str:
    label = obs.meeting.label
    if label is None:
        return ""
    return f"Private note on this meeting (only its participants see it): {label}"


def _attempts_line(obs: BatchObservation) -> str:
    return f"You have {obs.max_attempts} attempt(s) for this batch."


def user_message(obs: CalendarObservation) -> str:
    """The A.3 user message for one observation (see the module docstring)."""
    common: dict[str, object] = {
        "round": obs.round + 1,
        "num_rounds": obs.num_rounds,
        "meeting_id": obs.meeting.meeting_id,
        "participants": _agents(obs.meeting.participants),
        "calendar": obs.calendar.text,
        "penalty": obs.penalty,
        "inbox": render_inbox(obs.new_messages),
    }
    if isinstance(obs, CheapTalkObservation):
        budget = _budget(obs)
        if obs.round_start and obs.is_participant:
            text = render(
                "round_start",
                **common,
                order=_agents(obs.meeting.speaker_order),
                cost=obs.meeting.cost,
                label_line=_label_line(obs),
                budget=budget,
            )
        elif obs.round_start:
            text = render("contacted", **common, budget=budget)
        else:
            last = obs.max_turns is not None and obs.turn + 1 == obs.max_turns
            text = render(
                "turn",
                **common,
                turn=obs.turn + 1,
                budget=budget,
                closing=load("turn_closing") if last else "",
            )
    elif obs.attempt > 1:
        text = render(
            "retry",
            phase=obs.phase.upper(),
            attempt=obs.attempt,
            max_attempts=obs.max_attempts,
            conflicts="\n".join(f"- {c}" for c in obs.conflicts) or "- (no reason given)",
        )
    elif obs.phase == "voluntary":
        text = render("voluntary", **common, attempts_line=_attempts_line(obs))
    else:
        text = render(
            "decision", **common, label_line=_label_line(obs), attempts_line=_attempts_line(obs)
        )
    if obs.refused:
        text = "\n".join([*map(_refused_line, obs.refused), "", text])
    return _tidy(text)


_REFUSED_WHAT = {
    "dm": "direct message",
    "participant_groupchat": "participants' group post",
    "all_agent_groupchat": "all-agent group post",
}


def _refused_line(refused: RefusedAction) -> str:
    """One refused tool call of the previous reply, in the shared refusal wording."""
    what = _REFUSED_WHAT.get(refused.action, f"{refused.action} action")
    return refusal(refused.reason, what=what)
