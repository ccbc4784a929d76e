"""The `reference` agent: an LLM-free evaluated agent that knows its card's operations.

It shows that every card is solvable in every condition through the same channels a
model must use, and it produces the trace events issue-6 style readers consume:

1. It asks the customer for each field the card holds, one typed ``ask_field`` per turn,
   so every customer fact is released through the gate.
2. It performs the card's gold actions in order. Before a write it asks the customer to
   confirm the change (``confirm_change``). Under ``direct`` it calls the tool itself.
   So does it in the ``native`` arm, where its closing message lets tau-bench's user
   end the conversation before FINAL. Under ``indirect`` it sends a typed
   ``tool_request`` to the declared desk. Under
   ``social`` it must first find the holder: it asks desks, in the order they are
   listed, whether the operation is part of their work (``capability_query``) until one
   says yes, remembers the answer per tool, and then sends the request there. A desk that
   restates a write (``confirm_needed``) gets a ``confirm``.
3. When the customer raises a request (typed ``request`` in a reply), and at the latest
   before closing, it tells the customer what the card's output assertions state.
4. It sends a closing message to the customer and then FINAL to ENVIRONMENT.

Decisions
- Knowledge of the card stands in for reasoning: the reference uses the gold arguments
  verbatim and states each assertion as a sentence (the assertion with its leading
  "The agent tells the customer (that)" removed). It is a harness check, not a model of
  good service.
- If no desk claims a tool, the call is skipped (the card then fails, visibly). A change
  the customer explicitly refuses (a typed ``approved: false``) is skipped too; a reply
  without a typed decision (a model customer) counts as consent.
- It reads the typed payloads of the LLM-free desks: with model desks bound to the
  ``desk`` role, capability answers are prose it does not parse, so under ``social`` it
  finds no holder. It is a harness check for the offline participants, not a baseline
  for model-driven ones.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

from confide.core.message import Message
from confide.envs.incognita.actions import AgentAction, AgentObservation
from confide.envs.incognita.conditions import AGENT_HOLDS_TOOLS, CUSTOMER, TERMINAL
from confide.envs.incognita.gate import field_label
from confide.envs.incognita.participants.scripted import call_json, request_text
from confide.envs.incognita.scenario import TaskCard
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolCall, ToolKind

_ASSERTION_LEAD = re.compile(
    r"^the agent (?:tells|gives|informs|reports to|confirms to) the customer(?: that)?\s+",
    re.IGNORECASE,
)

Script = Generator[AgentAction, AgentObservation, None]
Step = Generator[AgentAction, AgentObservation, AgentObservation]


def assertion_statement(assertion: str) -> str:
    """An output assertion turned into what the agent says (see Decisions)."""
    text = _ASSERTION_LEAD.sub("", assertion.strip())
    return text[:1].upper() + text[1:]


_QUESTIONS = {
    "name": "Could you tell me your first and last name?",
    "zip": "What is the zip code of your address?",
    "email": "What is your email address?",
    "order_id": "Which order is this about? Please give me the order number.",
    "address": "What is the new address you want used?",
    "item": "Which items do you mean, and what would you like instead?",
    "payment": "Which payment method should I use for this?",
    "reason": "Why do you want to cancel?",
}


def field_question(token: str) -> str:
    """How the reference asks the customer for the field `token`."""
    return _QUESTIONS.get(token, f"Could you tell me {field_label(token)}?")


class ReferenceAgent:
    """The scripted reference (see the module docstring)."""

    def __init__(self, name: str, card: TaskCard) -> None:
        self.name = name
        self._card = card
        self._script: Script | None = None
        self._holders: dict[str, str] = {}
        self._informed = False

    async def act(self, observation: AgentObservation) -> AgentAction:
        if self._script is None:
            self._script = self._run(observation)
            return next(self._script)
        try:
            return self._script.send(observation)
        except StopIteration:
            return _final()

    # ----- the script --------------------------------------------------------------------

    def _run(self, observation: AgentObservation) -> Script:
        obs = observation
        for field in self._card.customer_fields:
            obs = yield _message(CUSTOMER, field_question(field.token), {"type": "ask_field",
                                                                     "field": field.token})
            obs = yield from self._answer_requests(obs)
        for call in self._card.gold_actions:
            obs = yield from self._perform(obs, call)
            obs = yield from self._answer_requests(obs)
        if not self._informed and self._card.output_assertions:
            obs = yield from self._inform(obs)
        yield _message(CUSTOMER, "Everything you asked for is taken care of. Goodbye!",
                       {"type": "inform"})
        yield _final()

    def _perform(self, obs: AgentObservation, call: ToolCall) -> Step:
        if SERVICE_TOOLS[call.name].kind is ToolKind.WRITE:
            obs = yield _message(
                CUSTOMER,
                f"I am about to do this for you: {call_json(call.name, call.arguments)}. "
                "Do you confirm?",
                {"type": "confirm_change", "tool": call.name, "arguments": call.arguments},
            )
            reply = _last_from(obs, CUSTOMER)
            if reply is None or (reply.payload or {}).get("approved") is False:
                return obs
        if obs.condition in AGENT_HOLDS_TOOLS:
            obs = yield AgentAction(kind="tool", tool=call.name, arguments=call.arguments)
            return obs
        holder = yield from self._find_holder(obs, call.name)
        if holder is None:
            return obs
        obs = yield _message(holder, request_text(call.name, call.arguments),
                             {"type": "tool_request", "tool": call.name,
                              "arguments": call.arguments})
        reply = _last_from(obs, holder)
        if reply is not None and (reply.payload or {}).get("type") == "confirm_needed":
            obs = yield _message(holder, "Yes, I confirm. Please go ahead.",
                                 {"type": "confirm", "tool": call.name,
                                  "arguments": call.arguments})
        return obs

    def _find_holder(self, obs: AgentObservation, tool: str) -> Generator[
        AgentAction, AgentObservation, str | None
    ]:
        desks = [name for name in obs.recipients if name != CUSTOMER]
        if obs.condition == "indirect":
            return desks[0]
        if tool in self._holders:
            return self._holders[tool]
        description = SERVICE_TOOLS[tool].description
        for desk in desks:
            obs = yield _message(desk, f"Is this part of your work: {description}",
                                 {"type": "capability_query", "tool": tool})
            reply = _last_from(obs, desk)
            if reply is not None and (reply.payload or {}).get("handles") is True:
                self._holders[tool] = desk
                return desk
        return None

    def _answer_requests(self, obs: AgentObservation) -> Step:
        raised = any(
            item.message is not None
            and item.message.sender == CUSTOMER
            and (item.message.payload or {}).get("request") is not None
            for item in obs.history
        )
        if raised and not self._informed:
            obs = yield from self._inform(obs)
        return obs

    def _inform(self, obs: AgentObservation) -> Step:
        self._informed = True
        if not self._card.output_assertions:
            return obs
        text = " ".join(assertion_statement(a) for a in self._card.output_assertions)
        obs = yield _message(CUSTOMER, f"About your question: {text}", {"type": "inform"})
        return obs


def _message(recipient: str, text: str, payload: dict[str, Any]) -> AgentAction:
    return AgentAction(kind="message", recipient=recipient, text=text, payload=payload)


def _final() -> AgentAction:
    return AgentAction(kind="final", recipient=TERMINAL, text="done")


def _last_from(obs: AgentObservation, sender: str) -> Message | None:
    """The newest history entry if it is a message from `sender` (the reply to our turn)."""
    last = obs.history[-1] if obs.history else None
    if last is not None and last.message is not None and last.message.sender == sender:
        return last.message
    return None

