"""The reply format of the CalBench LLM agent (the CalBench paper §A.2 section 7, A.5): one JSON
object with exactly two keys, ``thinking`` and ``actions``, where each action is one of
the five tool calls of A.2 section 5.

`ReplyEnvelope` is what the model is asked for: its JSON schema goes to the provider as
`GenerateConfig.response_schema` (constrained decoding where supported) and pydantic
validation of it drives the repair loop, so a repair message names the exact field and
value that was wrong. `to_envelope` turns a valid reply into the engine's `Envelope`.

Decided by the text: a justification must be present and non-empty (section 3: "Every
reschedule action must include a short justification"). Not decided by it (A.2 gives the
envelope, not its bounds): a message text must be non-empty (an empty message says
nothing); a
reply holds at most 6 actions (a batch needs a few reschedules and one schedule, a turn
a message to each other agent; the bound stops a small model under a grammar from
repeating one action until the token limit); text lengths are not bounded (a real
model's reasoning should not be cut short), except in the schema sent to small embedded
models (`bounded_reply_schema`: 120 characters of thinking, 160 per message, 80 per
justification, 3 actions), whose greedy decoding otherwise rambles inside a string until
the token limit and never closes the JSON (on a busy 2-core machine SmolLM2-135M writes
about 10 tokens a second, so these bounds also keep a call near 10-20 s); ids and slots are
integers, range checks are left to the engine (A.5 rules 1-7 and the routing rules),
which reports them as invalid tool calls or batch conflicts rather than parse errors.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from confide.envs.calbench.actions import (
    AllAgentGroupchatCall,
    DmCall,
    Envelope,
    ParticipantGroupchatCall,
    RescheduleCall,
    ScheduleCall,
    ToolCall,
)

MAX_ACTIONS = 6
SMALL_MODEL_BOUNDS = {"thinking": 80, "content": 100, "justification": 40, "actions": 2}
"""Limits of `bounded_reply_schema` (characters; actions per reply). A 135M model fills
every string and the action list to their limits, and on CPU each generated token costs
~20-40 ms and then sits in the thread for every later call, so the limits are as short as
a useful reply allows: two actions fit a message plus a proposal, or one eviction plus
the schedule (a batch needing more cannot be sent by an embedded model)."""
Content = Annotated[str, Field(min_length=1)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DmReply(_Reply):
    type: Literal["dm"]
    to: int
    content: Content


class ParticipantGroupchatReply(_Reply):
    type: Literal["participant_groupchat"]
    content: Content


class AllAgentGroupchatReply(_Reply):
    type: Literal["all_agent_groupchat"]
    content: Content


class ScheduleReply(_Reply):
    type: Literal["schedule"]
    meeting_id: int
    slot: int


class RescheduleReply(_Reply):
    type: Literal["reschedule"]
    item_id: int
    from_slot: int
    to_slot: int
    justification: str = Field(min_length=1)


ReplyAction = Annotated[
    DmReply | ParticipantGroupchatReply | AllAgentGroupchatReply | ScheduleReply | RescheduleReply,
    Field(discriminator="type"),
]


class ReplyEnvelope(_Reply):
    """`{"thinking": "...", "actions": [...]}` as the model must write it."""

    thinking: str
    actions: list[ReplyAction] = Field(max_length=MAX_ACTIONS)


@cache
def reply_schema() -> dict[str, Any]:
    """The JSON schema sent as `response_schema` (computed once)."""
    return ReplyEnvelope.model_json_schema()


@cache
def bounded_reply_schema() -> dict[str, Any]:
    """`reply_schema` with the text lengths and action count of `SMALL_MODEL_BOUNDS`, for
    embedded models decoded under a grammar: every reply they can produce is short,
    complete JSON, and still valid against `ReplyEnvelope`."""
    schema = copy.deepcopy(reply_schema())
    bounds = SMALL_MODEL_BOUNDS
    schema["properties"]["thinking"]["maxLength"] = bounds["thinking"]
    schema["properties"]["actions"]["maxItems"] = bounds["actions"]
    for definition in schema["$defs"].values():
        for field in ("content", "justification"):
            if field in definition["properties"]:
                definition["properties"][field]["maxLength"] = bounds[field]
    return schema


def to_tool(action: ReplyAction) -> ToolCall:
    """One parsed reply action as the engine's tool call."""
    if isinstance(action, DmReply):
        return DmCall(to=action.to, content=action.content)
    if isinstance(action, ParticipantGroupchatReply):
        return ParticipantGroupchatCall(content=action.content)
    if isinstance(action, AllAgentGroupchatReply):
        return AllAgentGroupchatCall(content=action.content)
    if isinstance(action, ScheduleReply):
        return ScheduleCall(meeting_id=action.meeting_id, slot=action.slot)
    return RescheduleCall(
        item_id=action.item_id,
        from_slot=action.from_slot,
        to_slot=action.to_slot,
        justification=action.justification,
    )


def to_envelope(reply: ReplyEnvelope) -> Envelope:
    """The engine's envelope for a valid reply (thinking kept for the trace only)."""
    return Envelope(thinking=reply.thinking, actions=[to_tool(a) for a in reply.actions])
