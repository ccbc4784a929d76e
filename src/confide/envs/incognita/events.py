"""Incognita's trace events: one class per kind, listed in `EVENTS`.

The episode (env.py, section 3) records its setup, the agent's invalid actions and final
answer, desks or customer that gave no reply, and the evaluation (section 3.3); the
execution layer (execution.py) records every proposed tool call and what became of it
(rejected, accepted, executed); the customer's gate (gate.py) records every request for a
private field and every release; the native arm (native.py) records the end of a
conversation by tau-bench's rule. On disk each is an `env` line whose `data` holds the
fields of its `...Data` class; `Evaluation` is both the outcome of a trial and its event's
payload.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from confide.core.trace import EnvEvent, EventData

Via = Literal["payload", "keywords", "model"]
"""How the gate learned which field a message asks for."""
Outcome = Literal["released", "already_released", "not_held", "no_field"]
RejectionReason = Literal["unknown_tool", "not_owner", "inadmissible_arguments"]
NoReplyReason = Literal["silent", "invalid", "steps_exhausted"]
EndedBy = Literal["user_stop", "transfer"]
"""How a native episode ended by tau-bench's rule: the user's stop token, or an executed
transfer to a human agent."""


class EpisodeSetupData(EventData):
    card_id: str
    condition: str
    participants: list[str]
    recipients: list[str]
    desk_roles: dict[str, str]
    agent_tools: list[str]
    roles: dict[str, str]
    max_turns: int
    desk_steps: int
    prompt_version: str
    world_hash: str


class EpisodeSetup(EnvEvent):
    """The condition, its seats and roles, the limits and the starting world's hash."""

    name: Literal["episode_setup"] = "episode_setup"
    data: EpisodeSetupData


class BudgetExhaustedData(EventData):
    turns: int


class BudgetExhausted(EnvEvent):
    """The agent used every turn without a FINAL answer."""

    name: Literal["budget_exhausted"] = "budget_exhausted"
    data: BudgetExhaustedData


class FinalData(EventData):
    turn: int
    text: str | None


class Final(EnvEvent):
    """The agent's FINAL answer, which ends the episode."""

    name: Literal["final"] = "final"
    data: FinalData


class ConversationEndedData(EventData):
    turn: int
    by: EndedBy


class ConversationEnded(EnvEvent):
    """A native episode ended by tau-bench's rule (the user stopped, or the agent's
    transfer to a human agent was executed)."""

    name: Literal["conversation_ended"] = "conversation_ended"
    data: ConversationEndedData


class InvalidActionData(EventData):
    participant: str
    problem: str


class InvalidAction(EnvEvent):
    name: Literal["invalid_action"] = "invalid_action"
    data: InvalidActionData


class NoReplyData(EventData):
    participant: str
    reason: NoReplyReason


class NoReply(EnvEvent):
    """A desk or the customer answered the agent with nothing."""

    name: Literal["no_reply"] = "no_reply"
    data: NoReplyData


class AssertionVerdict(BaseModel):
    """The judge's verdict on one output assertion."""

    model_config = ConfigDict(frozen=True)

    index: int
    text: str
    holds: bool
    reason: str


class Evaluation(EventData):
    """The outcome of one trial."""

    model_config = ConfigDict(frozen=True)

    success: bool
    db_pass: bool
    final_hash: str
    gold_hash: str
    outputs_pass: bool | None
    """None when the card has no output assertions (the channel is not operative)."""
    judge: str | None
    assertions: list[AssertionVerdict]


class Evaluated(EnvEvent):
    """Both reward channels of the finished trial (section 3.3)."""

    name: Literal["evaluation"] = "evaluation"
    data: Evaluation


class ToolCallData(EventData):
    call_id: int
    proposer: str
    tool: str
    arguments: dict[str, JsonValue]
    """As proposed (`tool_proposed`, `tool_rejected`) or as admitted (the others)."""


class ToolProposed(EnvEvent):
    name: Literal["tool_proposed"] = "tool_proposed"
    data: ToolCallData


class ToolRejectedData(ToolCallData):
    reason: RejectionReason
    message: str


class ToolRejected(EnvEvent):
    """A proposal refused before execution (unknown tool, not its owner, bad arguments)."""

    name: Literal["tool_rejected"] = "tool_rejected"
    data: ToolRejectedData


class ToolAcceptedData(ToolCallData):
    kind: str
    """The tool's kind (read, write, ...)."""


class ToolAccepted(EnvEvent):
    name: Literal["tool_accepted"] = "tool_accepted"
    data: ToolAcceptedData


class ToolExecutedData(ToolAcceptedData):
    ok: bool
    error_code: str | None
    error: str | None
    result: JsonValue
    state_hash: str | None
    """The world's hash after a write; None after a read."""


class ToolExecuted(EnvEvent):
    name: Literal["tool_executed"] = "tool_executed"
    data: ToolExecutedData


class GateRequestData(EventData):
    message_id: int
    field: str | None
    via: Via
    outcome: Outcome


class GateRequest(EnvEvent):
    """An agent message the customer's gate read as asking for `field` (or nothing)."""

    name: Literal["gate_request"] = "gate_request"
    data: GateRequestData


class GateReleaseData(EventData):
    message_id: int
    field: str
    via: Via
    order: int


class GateRelease(EnvEvent):
    """The customer released a private field, the `order`-th release (from 0)."""

    name: Literal["gate_release"] = "gate_release"
    data: GateReleaseData


EVENTS: tuple[type[EnvEvent], ...] = (
    EpisodeSetup, BudgetExhausted, Final, InvalidAction, NoReply, Evaluated, ToolProposed,
    ToolRejected, ToolAccepted, ToolExecuted, GateRequest, GateRelease, ConversationEnded,
)
