"""``mock/incognita-skilled``: a DEMO evaluated agent of middling, condition-dependent
skill. It is not a benchmark model and its numbers measure nothing: its failures come from
fixed lapse rates we made up (`LAPSE_RATE`), so an end-to-end experiment has a second
"model" whose success is neither 0 nor 1 and differs by access condition (`confide models
list` says so). ``mock/incognita-ineffective`` instead fails every episode at one stage,
so every failure type occurs offline.

It answers only agent turns (schema ``AgentTurn``) and drives the real model path: the
system prompt, the rendered conversation, the JSON reply format, the repair loop. From the
prompt alone it recovers

- the card: the customer's opening line (the first user turn) names one card of the
  shipped suite (`cards.load_suite`), whose fields, gold actions and output assertions it
  then knows, as the LLM-free ``reference`` agent does;
- the condition: ``direct`` when the request offers tools (natively, or in the prompt
  under the model layer's text fallback), ``indirect`` when the only desk
  is the indirect desk, else ``social``.

Its plan follows the reference's in text form: ask the customer for each of the card's
fields (the gate's keyword matcher releases them); perform the gold actions in order --
itself under direct access (a native tool call, or its JSON under the text fallback),
otherwise by writing the call as JSON to a desk (the indirect
desk; under social the listed desks in order until one does not decline, remembered per
tool), and, when a desk restates a write and asks to go ahead, by sending the same call
again as the confirmation; tell the customer the card's output assertions; say goodbye;
FINAL. The plan is replayed against the conversation, so each reply depends only on the
prompt (deterministic; no state between calls).

Lapses (the source of failures). For each (card, condition) a `random.Random` seeded from
``sha256(card_id | condition | seed)`` decides whether the episode lapses, with
probability `LAPSE_RATE` of the condition, and if so which lapse, drawn from those that
apply:

- ``skip_fields``: asks only for the first field, then closes (acquisition failure);
- ``no_action``: asks for every field, then closes without acting;
- ``stop_early``: performs the gold actions up to the last write, which it leaves out;
- ``wrong_desk`` (social only): sends the last write once, to the first listed desk
  (usually not its holder), and neither tries another desk nor confirms it.

Decisions
- Lapse rates rise with the condition's coordination burden (direct < indirect < social),
  the direction the Incognita paper reports for models; the numbers are ours, chosen for a demo.
- The option ``seed`` (default 0) varies which episodes lapse, so two differently seeded
  instances act as two "models" of similar skill.
- A prompt whose opening line is no shipped card's is an error (`SkilledMockError`): the
  mock only knows the shipped suite. The preflight reports a run whose tasks are not all
  shipped cards before any episode (`unknown_cards`; converted tau2 tasks, a user's
  suite file).
- Non-agent requests (customer, desk, gate, judge) are answered as ``mock/incognita``
  answers them, so binding this mock to a role behaves like that mock there.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Generator, Sequence
from functools import cache
from typing import Any

from confide.envs.incognita.conditions import CUSTOMER, INDIRECT_DESK, TERMINAL
from confide.envs.incognita.participants import phrasing
from confide.envs.incognita.participants.mock import (
    DECLINE,
    RECIPIENTS,
    agent_replies,
    agent_reply,
    incognita_reply,
    offers_tools,
    register_seeded_mock,
    say,
)
from confide.envs.incognita.participants.reference import assertion_statement, field_question
from confide.envs.incognita.participants.scripted import call_json
from confide.envs.incognita.scenario import TaskCard, load_suite
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolCall, ToolKind
from confide.errors import ConfideError
from confide.llm import ChatMessage, GenerateConfig
from confide.llm.providers.mock import Reply

SKILLED_MOCK_NAME = "incognita-skilled"
LAPSE_RATE: dict[str, float] = {"direct": 0.15, "indirect": 0.4, "social": 0.65}
"""Probability that an episode of the condition lapses (see Decisions)."""

_GO_AHEAD = ("shall i go ahead", "do you confirm", "please confirm")

Turn = dict[str, Any]
Plan = Generator[Turn, str, None]
Call = Generator[Turn, str, str]
Ask = Callable[[ToolCall], str]
"""How the agent writes a request for a call to a desk."""


class SkilledMockError(ConfideError):
    """The skilled mock was shown a conversation it cannot place."""


@cache
def _cards_by_opening() -> dict[str, TaskCard]:
    _, suite = load_suite()
    return {card.opening_line.strip(): card for card in suite.cards}


def unknown_cards(cards: Sequence[TaskCard]) -> list[str]:
    """The ids of `cards` that are not shipped cards (their opening line opens none, or
    another one): `card_of` cannot place their episodes."""
    known = _cards_by_opening()
    return [card.card_id for card in cards if known.get(card.opening_line.strip()) != card]


def card_of(messages: list[ChatMessage]) -> TaskCard:
    opening = next((m.content for m in messages[1:] if m.role == "user"), "")
    line = opening.split(": ", 1)[-1].strip() if opening.startswith(f"{CUSTOMER}: ") else ""
    card = _cards_by_opening().get(line)
    if card is None:
        raise SkilledMockError(
            f"mock/{SKILLED_MOCK_NAME}: the first customer turn {opening[:80]!r} opens no "
            "card of the shipped suite"
        )
    return card


def condition_of(messages: list[ChatMessage], config: GenerateConfig) -> tuple[str, list[str]]:
    """The condition and the desks the agent may address, read from its request."""
    if offers_tools(messages, config):
        return "direct", []
    system = messages[0].content
    found = RECIPIENTS.search(system)
    listed = [r.strip() for r in found.group(1).split("|")] if found else []
    desks = [r for r in listed if r != CUSTOMER]
    return ("indirect" if desks == [INDIRECT_DESK] else "social"), desks


def lapse_for(card: TaskCard, condition: str, seed: int) -> str | None:
    """The lapse of this (card, condition) episode, or None (see the module docstring)."""
    digest = hashlib.sha256(f"{card.card_id}|{condition}|{seed}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    if rng.random() >= LAPSE_RATE[condition]:
        return None
    kinds = ["skip_fields", "no_action", "stop_early"]
    if condition == "social":
        kinds.append("wrong_desk")
    return rng.choice(kinds)


def skilled_reply(
    messages: list[ChatMessage], config: GenerateConfig, seed: int, *, prose: bool = False
) -> Reply:
    """The mock's reply to one request (see the module docstring); with `prose`, the
    unlapsing prose agent of `mock_prose`."""
    if (config.response_schema or {}).get("title") != "AgentTurn":
        return incognita_reply(messages, config)
    card = card_of(messages)
    condition, desks = condition_of(messages, config)
    lapse = None if prose else lapse_for(card, condition, seed)
    plan = _plan(card, condition, desks, lapse, describe if prose else json_request)
    action = next(plan)
    for reply in agent_replies(messages[1:]):
        action = plan.send(reply)
    return agent_reply(action, config)


def _plan(
    card: TaskCard, condition: str, desks: list[str], lapse: str | None, ask: Ask
) -> Plan:
    fields = card.customer_fields[:1] if lapse == "skip_fields" else card.customer_fields
    for field in fields:
        yield say(CUSTOMER, field_question(field.token))
    if lapse not in ("skip_fields", "no_action"):
        calls = list(card.gold_actions)
        last_write = max(i for i, c in enumerate(calls) if SERVICE_TOOLS[c.name].kind
                         is ToolKind.WRITE)
        holders: dict[str, str] = {}
        for index, call in enumerate(calls):
            if index == last_write and lapse == "stop_early":
                break
            if index == last_write and lapse == "wrong_desk":
                yield say(desks[0], ask(call))
                break
            yield from perform(call, condition, desks, holders, ask)
    if card.output_assertions:
        text = " ".join(assertion_statement(a) for a in card.output_assertions)
        yield say(CUSTOMER, f"About your question: {text}")
    yield say(CUSTOMER, "Everything you asked for is taken care of. Goodbye!")
    yield {"recipient": TERMINAL, "message": "done", "message_type": "FINAL"}


def json_request(call: ToolCall) -> str:
    return f"Could you do this for me: {call_json(call.name, call.arguments)}"


def describe(call: ToolCall) -> str:
    """A request in prose only (`phrasing`): no JSON, no tool name."""
    return f"Could you {phrasing.describe(call.name, call.arguments)}?"


def perform(
    call: ToolCall, condition: str, desks: list[str], holders: dict[str, str], ask: Ask
) -> Call:
    if condition == "direct":
        reply = yield {"tool": call.name, "arguments": call.arguments}
        return reply
    candidates = [holders[call.name]] if call.name in holders else desks
    reply = ""
    for desk in candidates:
        reply = yield say(desk, ask(call))
        if DECLINE.search(reply):
            continue
        holders[call.name] = desk
        if any(phrase in reply.lower() for phrase in _GO_AHEAD):
            reply = yield say(desk, f"Yes, please go ahead. {ask(call)}")
        return reply
    return reply


def register_skilled_mock() -> None:
    """Make ``mock/incognita-skilled`` available (idempotent)."""
    register_seeded_mock(SKILLED_MOCK_NAME, skilled_reply)
