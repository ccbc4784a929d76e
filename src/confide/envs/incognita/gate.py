"""The customer's disclosure gate (the Incognita paper, sections 3.1 and 4.1).

The customer's facts (a card's ``customer_fields``) sit behind this gate. Each message the
agent sends to the customer is examined once, before the customer answers: the gate
names at most one field the message asks for and, if the customer holds it and has not
yet released it, releases it into the customer's memory. Nothing else ever enters that
memory, so the customer cannot volunteer a fact the agent did not ask for -- the boundary
is enforced in code, not by asking a model to hold back.

Events (bookkeeping, visible to the customer only):

- ``gate_request`` {message_id, field, via, outcome} for every agent message to the
  customer; ``field`` is the token asked for (null when none), ``outcome`` is
  ``released``, ``already_released``, ``not_held`` (the customer does not know it) or
  ``no_field``.
- ``gate_release`` {message_id, field, via, order} when a field is released; ``order``
  counts releases from 0. A customer fact counts as acquired exactly when this event
  exists for its token (section 4.1).

``via`` says how the asked-for field was identified: ``payload`` (a typed ``ask_field``
request from a scripted participant), ``keywords`` (the LLM-free matcher below) or
``model`` (a classifier model reading the message; see `participants.customer_llm`).

Decisions
- One release per agent message: a message asking for several fields releases the one the
  classifier names (the matcher: the field whose cue appears earliest in the message),
  so each further field needs its own question.
- The LLM-free matcher looks for a short list of cue phrases per release token (below),
  whole words, case-insensitive. It exists for scripted customers talking to free-text
  agents and for the mock model; the paper's setup uses a model as classifier.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from confide.core.trace import TraceRecorder
from confide.envs.incognita import events as ev
from confide.envs.incognita.conditions import CUSTOMER
from confide.envs.incognita.events import Outcome, Via
from confide.envs.incognita.scenario import RELEASE_TOKENS, CustomerField

TOKEN_CUES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "name": ("name", "called", "who am i speaking"),
        "zip": ("zip", "zip code", "postal code", "postcode"),
        "email": ("email", "e-mail"),
        "order_id": ("order id", "order number", "which order", "order identifier"),
        "address": ("address", "where should", "ship it to", "deliver it to"),
        "item": ("item", "items", "which product", "what product", "options", "which one"),
        "payment": ("payment", "pay", "refund", "card", "paypal"),
        "reason": ("reason", "why"),
    }
)
"""Cue phrases of the keyword matcher, per release token."""


def field_label(token: str) -> str:
    """What a release token stands for, in words (shown to the classifier and memory)."""
    return RELEASE_TOKENS.get(token, token.replace("_", " "))


def match_field(text: str, tokens: Sequence[str]) -> str | None:
    """The token among `tokens` whose cue appears earliest in `text` (ties: list order)."""
    best: tuple[int, int] | None = None
    chosen: str | None = None
    lowered = text.lower()
    for rank, token in enumerate(tokens):
        cues = TOKEN_CUES.get(token, (token.replace("_", " "),))
        for cue in cues:
            found = re.search(rf"\b{re.escape(cue)}\b", lowered)
            if found is not None and (best is None or (found.start(), rank) < best):
                best, chosen = (found.start(), rank), token
    return chosen


class MemoryItem(BaseModel):
    """A released fact as the customer holds it."""

    model_config = ConfigDict(frozen=True)

    field: str
    label: str
    value: str


class GateDecision(BaseModel):
    """What the gate did with one agent message."""

    model_config = ConfigDict(frozen=True)

    field: str | None
    outcome: Outcome
    via: Via


class DisclosureGate:
    """Holds the customer's fields and releases them one at a time, on request."""

    def __init__(self, fields: Sequence[CustomerField], trace: TraceRecorder) -> None:
        self._fields = {field.token: field.value for field in fields}
        self._trace = trace
        self._released: list[str] = []

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every token the gate can be asked about (all release tokens, in order)."""
        return tuple(RELEASE_TOKENS)

    @property
    def released(self) -> tuple[str, ...]:
        return tuple(self._released)

    def memory(self) -> list[MemoryItem]:
        """The released facts, in release order."""
        return [
            MemoryItem(field=token, label=field_label(token), value=self._fields[token])
            for token in self._released
        ]

    def decide(
        self, field: str | None, *, message_id: int, turn: int | None, via: Via
    ) -> GateDecision:
        """Apply the gate to one agent message that asks for `field` (None: nothing)."""
        if field is None or field not in RELEASE_TOKENS:
            outcome: Outcome = "no_field"
            field = None
        elif field in self._released:
            outcome = "already_released"
        elif field not in self._fields:
            outcome = "not_held"
        else:
            outcome = "released"
        self._trace.emit(ev.GateRequest(
            seat=CUSTOMER, round=turn, visible_to=[CUSTOMER],
            data=ev.GateRequestData(message_id=message_id, field=field, via=via, outcome=outcome),
        ))
        if outcome == "released" and field is not None:
            order = len(self._released)
            self._released.append(field)
            self._trace.emit(ev.GateRelease(
                seat=CUSTOMER, round=turn, visible_to=[CUSTOMER],
                data=ev.GateReleaseData(message_id=message_id, field=field, via=via, order=order),
            ))
        return GateDecision(field=field, outcome=outcome, via=via)
