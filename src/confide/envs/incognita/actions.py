"""Observations, actions and typed message payloads of Incognita's participants.

Every participant is shown a pydantic observation built only from messages the postbox
delivered to it and from its own state (its tool outcomes, its released memory), and
returns a pydantic action. Language-model participants read and write text; the LLM-free
participants also exchange *typed payloads* (below) in `Message.payload`, so a scripted
desk can act on a request without parsing prose. A payload is part of the message and is
seen by exactly its recipients.

Payload types (``type`` key):

- agent -> customer: ``ask_field`` {field}, ``confirm_change`` {tool, arguments},
  ``inform`` {} (an answer or a closing remark; the text carries it).
- customer -> agent: ``customer_reply`` {field, value, approved, tool, arguments,
  request, request_text} -- each part optional: an answered field, a confirmation decision,
  a raised request.
- agent -> desk: ``capability_query`` {tool}, ``tool_request`` {tool, arguments},
  ``confirm`` {tool, arguments}.
- desk -> agent: ``capability_answer`` {tool, handles}, ``confirm_needed`` {tool,
  arguments}, ``tool_reply`` {tool, ok, result, error}, ``decline`` {tool}, ``clarify`` {}.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from confide.core.message import Message
from confide.envs.incognita.conditions import ConditionName, DeskRole
from confide.envs.incognita.execution import ToolOutcome
from confide.envs.incognita.gate import GateDecision, MemoryItem


class HistoryItem(BaseModel):
    """One entry of a participant's own history: a message it saw or a tool outcome."""

    model_config = ConfigDict(frozen=True)

    message: Message | None = None
    tool: ToolOutcome | None = None


class AgentObservation(BaseModel):
    """What the evaluated agent sees before a turn (the Incognita paper §A.1)."""

    name: str
    condition: ConditionName
    recipients: tuple[str, ...]
    tools: tuple[str, ...] = Field(description="Tools it holds (all of them in direct, else none).")
    turn: int
    turns_left: int
    history: list[HistoryItem]


class AgentAction(BaseModel):
    """One turn of the evaluated agent: a message, a tool call, the FINAL signal, or an
    invalid turn (the model produced nothing usable; `problem` says why)."""

    kind: Literal["message", "tool", "final", "invalid"]
    recipient: str | None = None
    text: str | None = None
    payload: dict[str, Any] | None = None
    tool: str | None = None
    arguments: dict[str, JsonValue] | None = None
    problem: str | None = None


class DeskObservation(BaseModel):
    """What a desk sees before one of its steps: its exchanges with the agent and its own
    tool outcomes, never the customer or another desk."""

    name: str
    role: DeskRole
    tools: tuple[str, ...]
    steps_left: int
    history: list[HistoryItem]


class DeskAction(BaseModel):
    """A desk step: propose a tool call, reply to the agent (ends its turn), or invalid."""

    kind: Literal["tool", "reply", "invalid"]
    tool: str | None = None
    arguments: dict[str, JsonValue] | None = None
    text: str | None = None
    payload: dict[str, Any] | None = None
    problem: str | None = None


class CustomerObservation(BaseModel):
    """What the customer sees before answering: its opening line, released memory, own
    requests, the dialogue with the agent, and what the gate did with the last message."""

    name: str
    opening_line: str
    memory: list[MemoryItem]
    requests: list[str]
    history: list[Message]
    gate: GateDecision


class CustomerAction(BaseModel):
    """The customer's reply (empty text: it stays silent this time)."""

    text: str
    payload: dict[str, Any] | None = None


def payload_type(message: Message) -> str | None:
    """The ``type`` of a message's typed payload, if it has one."""
    if message.payload is None:
        return None
    kind = message.payload.get("type")
    return kind if isinstance(kind, str) else None


class Participant(Protocol):
    """The evaluated seat (`agent`): what the reference agent, a model agent and a custom
    `py:` or plugin participant implement."""

    name: str

    async def act(self, observation: AgentObservation) -> AgentAction: ...


class Desk(Protocol):
    """A service-side participant (the intermediary of `indirect`, a desk of `social`)."""

    name: str

    async def act(self, observation: DeskObservation) -> DeskAction: ...


class Customer(Protocol):
    """The customer simulator behind the disclosure gate."""

    name: str

    async def act(self, observation: CustomerObservation) -> CustomerAction: ...


class GateClassifier(Protocol):
    """Names the field a message asks for among the offered release tokens."""

    async def classify(self, text: str, tokens: tuple[str, ...]) -> str | None: ...
