"""``mock/incognita-ineffective``: a mock evaluated agent that fails every episode at one
stage of the dependency chain, so an offline run shows all five failure types of
The Incognita paper, section 4.3.

Like ``mock/incognita-skilled`` it knows its card from the opening line and drives the
real model path (prompt, conversation, JSON turns, native tool calls), but in every
episode one of its requests is ineffective, or missing, at the stage its lapse names. The
lapse of a (card, condition) is drawn from ``sha256(card_id | condition | seed)`` among
those that apply:

- ``never_asks``: tells the customer it is looking into things and ends, having asked no
  one for anything (type 1, never requested);
- ``vague_request``: asks the customer for every field, then makes one request to the
  service side that names no operation and no detail -- a message to each desk, or under
  direct access the card's first read with no arguments -- and ends when it gets nothing
  usable (type 2, requested but not obtained; type 3 on a card whose reference needs no
  service fact);
- ``no_action``: asks for every field and performs the reference's reads, but no write
  (type 3, obtained but not delivered);
- ``bad_arguments``: performs every reference call, the last write with a wrong first
  argument (an identifier with a digit too many), which the execution layer refuses
  (type 4, delivered but incorrect);
- ``silent_answer`` (cards with output assertions only): performs every call correctly
  but never tells the customer what the card's assertions require (type 5, correct but
  unconfirmed).

Non-agent requests are answered as ``mock/incognita`` answers them. Requests to desks are
the JSON the scripted desks read, so it runs against either kind of desk.
"""

from __future__ import annotations

import hashlib
import random

from confide.envs.incognita.conditions import CUSTOMER, TERMINAL
from confide.envs.incognita.participants.mock import (
    agent_replies,
    agent_reply,
    incognita_reply,
    register_seeded_mock,
    say,
)
from confide.envs.incognita.participants.mock_skilled import (
    Plan,
    card_of,
    condition_of,
    json_request,
    perform,
)
from confide.envs.incognita.participants.reference import assertion_statement, field_question
from confide.envs.incognita.scenario import TaskCard
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolCall, ToolKind
from confide.llm import ChatMessage, GenerateConfig
from confide.llm.providers.mock import Reply

INEFFECTIVE_MOCK_NAME = "incognita-ineffective"
LAPSES: tuple[str, ...] = (
    "never_asks", "vague_request", "no_action", "bad_arguments", "silent_answer",
)
VAGUE = "Could you help me with this customer's request?"


def lapse_of(card: TaskCard, condition: str, seed: int) -> str:
    """The lapse of this (card, condition) episode (see the module docstring)."""
    digest = hashlib.sha256(f"{card.card_id}|{condition}|{seed}".encode()).digest()
    kinds = [k for k in LAPSES if k != "silent_answer" or card.output_assertions]
    return random.Random(int.from_bytes(digest[:8], "big")).choice(kinds)


def ineffective_reply(messages: list[ChatMessage], config: GenerateConfig, seed: int) -> Reply:
    """The mock's reply to one request."""
    if (config.response_schema or {}).get("title") != "AgentTurn":
        return incognita_reply(messages, config)
    card = card_of(messages)
    condition, desks = condition_of(messages, config)
    plan = _plan(card, condition, desks, lapse_of(card, condition, seed))
    action = next(plan)
    for reply in agent_replies(messages[1:]):
        action = plan.send(reply)
    return agent_reply(action, config)


def _wrong(call: ToolCall) -> ToolCall:
    """`call` with a digit too many in its first argument."""
    first = next(iter(call.arguments))
    return ToolCall(name=call.name, arguments={**call.arguments,
                                               first: f"{call.arguments[first]}0"})


def _plan(card: TaskCard, condition: str, desks: list[str], lapse: str) -> Plan:
    if lapse != "never_asks":
        for field in card.customer_fields:
            yield say(CUSTOMER, field_question(field.token))
    calls = list(card.gold_actions)
    if lapse == "vague_request":
        reads = [c for c in calls if SERVICE_TOOLS[c.name].kind is ToolKind.READ]
        if condition == "direct" and reads:
            yield {"tool": reads[0].name, "arguments": {}}
        for desk in desks:
            yield say(desk, VAGUE)
    elif lapse != "never_asks":
        writes = [i for i, c in enumerate(calls) if SERVICE_TOOLS[c.name].kind is ToolKind.WRITE]
        holders: dict[str, str] = {}
        for index, call in enumerate(calls):
            if lapse == "no_action" and index in writes:
                continue
            wrong = lapse == "bad_arguments" and index == writes[-1]
            yield from perform(_wrong(call) if wrong else call, condition, desks, holders,
                               json_request)
        if card.output_assertions and lapse != "silent_answer":
            text = " ".join(assertion_statement(a) for a in card.output_assertions)
            yield say(CUSTOMER, f"About your question: {text}")
    yield say(CUSTOMER, "Thank you for your patience. Goodbye!")
    yield {"recipient": TERMINAL, "message": "done", "message_type": "FINAL"}


def register_ineffective_mock() -> None:
    """Make ``mock/incognita-ineffective`` available (idempotent)."""
    register_seeded_mock(INEFFECTIVE_MOCK_NAME, ineffective_reply)
