"""LLM-free customer and desks, for tests and the offline default.

`ScriptedCustomer` answers from what the disclosure gate released (the field's value as
the card words it), decides typed change confirmations against the card's gold writes
(the changes it actually wants), and raises its own requests unprompted, one per reply,
starting with its first reply.

`ScriptedDesk` acts on typed requests (or a request written as a JSON object inside the
text) and follows the desk rules of the Incognita paper §A.3 in code: it answers capability
questions about itself only, declines anything outside its tools without pointing
elsewhere, restates a write and waits for the requester's confirmation before proposing
it, proposes exactly the requested call, and replies with the outcome.

Decisions
- A free-text message with no typed payload and no embedded request gets a request for
  the missing detail (conduct rule 2) from a desk, and "not sure" from the customer
  unless the gate released a field for it. Scripted participants never guess at prose.
- A free-text message that repeats, as an embedded JSON request, exactly the write the desk
  has just restated is that write's confirmation (what a model agent, which sends text
  only, does to confirm); any other text still gets a clarification or a new restatement.
- The scripted customer approves a change only when tool and arguments equal one of the
  card's gold writes: it never agrees to a change its card does not state (A.2).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import JsonValue

from confide.core.message import Message
from confide.envs.incognita.actions import (
    CustomerAction,
    CustomerObservation,
    DeskAction,
    DeskObservation,
    payload_type,
)
from confide.envs.incognita.conditions import AGENT
from confide.envs.incognita.execution import ToolOutcome
from confide.envs.incognita.scenario import TaskCard
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolKind
from confide.llm.structured import loads_reply

_EMBEDDED = re.compile(r"\{.*\}", re.DOTALL)


def embedded_request(text: str | None) -> tuple[str, dict[str, JsonValue]] | None:
    """A ``{"tool": ..., "arguments": {...}}`` object written inside a message, if any."""
    if not text:
        return None
    found = _EMBEDDED.search(text)
    if found is None:
        return None
    try:
        data = loads_reply(found.group(0))
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    return _as_request(data.get("tool"), data.get("arguments", {}))


def _as_request(tool: Any, arguments: Any) -> tuple[str, dict[str, JsonValue]] | None:
    if isinstance(tool, str) and isinstance(arguments, dict):
        return tool, arguments
    return None


def call_json(tool: str, arguments: dict[str, JsonValue]) -> str:
    """A tool call written as the JSON object scripted desks also parse from text."""
    return json.dumps({"tool": tool, "arguments": arguments})


def request_text(tool: str, arguments: dict[str, JsonValue]) -> str:
    """How a typed tool request reads as text."""
    return f"Please do this for me: {call_json(tool, arguments)}"


class ScriptedCustomer:
    """The LLM-free customer simulator (see the module docstring)."""

    def __init__(self, name: str, card: TaskCard) -> None:
        self.name = name
        self._wanted = [(call.name, call.arguments) for call in card.writes]
        self._requests = list(card.requests)
        self._raised = 0

    async def act(self, observation: CustomerObservation) -> CustomerAction:
        last = observation.history[-1]
        payload: dict[str, Any] = {"type": "customer_reply"}
        text = self._answer(last, observation, payload)
        if self._raised < len(self._requests):
            index = self._raised
            self._raised += 1
            payload["request"] = index
            payload["request_text"] = self._requests[index]
            text += f" Something else I need: {self._requests[index]}"
        return CustomerAction(text=text, payload=payload)

    def _answer(
        self, last: Message, observation: CustomerObservation, payload: dict[str, Any]
    ) -> str:
        gate = observation.gate
        if gate.outcome in ("released", "already_released"):
            value = next(m.value for m in observation.memory if m.field == gate.field)
            payload.update(field=gate.field, value=value)
            return value
        if gate.outcome == "not_held":
            payload.update(field=gate.field, value=None)
            return "I'm not sure about that, sorry."
        kind = payload_type(last)
        if kind == "confirm_change" and last.payload is not None:
            tool, arguments = last.payload.get("tool"), last.payload.get("arguments")
            approved = (tool, arguments) in self._wanted
            payload.update(tool=tool, arguments=arguments, approved=approved)
            return "Yes, please go ahead." if approved else "No, that is not what I want."
        if kind == "inform":
            return "Thank you."
        return "I'm not sure what you need from me."


class ScriptedDesk:
    """The LLM-free desk (see the module docstring)."""

    def __init__(self, name: str, tools: tuple[str, ...]) -> None:
        self.name = name
        self._tools = tools

    async def act(self, observation: DeskObservation) -> DeskAction:
        last = observation.history[-1]
        if last.tool is not None:
            return self._report(last.tool)
        message = last.message
        if message is None or message.sender != AGENT:
            return _reply("Could you tell me what you need?", {"type": "clarify"})
        kind = payload_type(message)
        data = message.payload or {}
        if kind == "capability_query":
            return self._capability(str(data.get("tool")))
        if kind == "confirm":
            return self._confirmed(observation, data)
        if kind == "tool_request":
            request = _as_request(data.get("tool"), data.get("arguments"))
        else:
            request = embedded_request(message.text)
        if request is None:
            return _reply(
                "Which exact operation do you need, and with which details?", {"type": "clarify"}
            )
        tool, arguments = request
        if kind is None and self._pending(observation) == (tool, arguments):
            return self._confirmed(observation, {"tool": tool, "arguments": arguments})
        return self._request(tool, arguments)

    def _capability(self, tool: str) -> DeskAction:
        handles = tool in self._tools
        text = "Yes, that is part of my work." if handles else "No, that is not part of my work."
        return _reply(text, {"type": "capability_answer", "tool": tool, "handles": handles})

    def _request(self, tool: str, arguments: dict[str, JsonValue]) -> DeskAction:
        if tool not in self._tools:
            return _reply("I can't help with that; it is outside my work.", {"type": "decline",
                                                                             "tool": tool})
        if SERVICE_TOOLS[tool].kind is ToolKind.WRITE:
            restated = json.dumps(arguments, sort_keys=True)
            return _reply(
                f"To be sure: you want me to carry out {tool} with {restated}. Shall I go ahead?",
                {"type": "confirm_needed", "tool": tool, "arguments": arguments},
            )
        return DeskAction(kind="tool", tool=tool, arguments=arguments)

    def _last_own(self, observation: DeskObservation) -> dict[str, Any] | None:
        """The payload of this desk's newest message."""
        return next(
            (
                item.message.payload
                for item in reversed(observation.history)
                if item.message is not None and item.message.sender == self.name
            ),
            None,
        )

    def _pending(self, observation: DeskObservation) -> tuple[Any, Any] | None:
        """The write this desk restated last and is waiting to have confirmed, if any."""
        restated = self._last_own(observation)
        if restated is None or restated.get("type") != "confirm_needed":
            return None
        return restated.get("tool"), restated.get("arguments")

    def _confirmed(self, observation: DeskObservation, data: dict[str, Any]) -> DeskAction:
        restated = self._last_own(observation)
        pending = (
            restated is not None
            and restated.get("type") == "confirm_needed"
            and (restated.get("tool"), restated.get("arguments"))
            == (data.get("tool"), data.get("arguments"))
        )
        if not pending or restated is None:
            return _reply("I have nothing waiting for your confirmation.", {"type": "clarify"})
        return DeskAction(kind="tool", tool=restated["tool"], arguments=restated["arguments"])

    def _report(self, outcome: ToolOutcome) -> DeskAction:
        payload = {
            "type": "tool_reply",
            "tool": outcome.tool,
            "ok": outcome.status == "ok",
            "result": outcome.result,
            "error": None if outcome.status == "ok" else outcome.text,
        }
        if outcome.status == "ok":
            return _reply(f"Done. Here is what my records show: {outcome.text}", payload)
        return _reply(f"That did not work. {outcome.text}", payload)


def _reply(text: str, payload: dict[str, Any]) -> DeskAction:
    return DeskAction(kind="reply", text=text, payload=payload)
