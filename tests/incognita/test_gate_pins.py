"""The disclosure gate pinned from mutation-testing survivors (bench/mutation.py): what it
offers to be asked about, and that a decision or a released fact cannot be rewritten
after the fact (the trace and the customer's memory must agree)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from confide.core.trace import TraceRecorder
from confide.envs.incognita.gate import DisclosureGate, match_field
from confide.envs.incognita.scenario import RELEASE_TOKENS, CustomerField

FIELDS = [CustomerField(token="email", value="It's ada@example.com.")]


def test_the_gate_can_be_asked_about_every_release_token_in_order() -> None:
    gate = DisclosureGate(FIELDS, TraceRecorder())
    assert gate.tokens == tuple(RELEASE_TOKENS)
    assert match_field("And your email, please?", gate.tokens) == "email"


def test_a_released_fact_and_a_decision_cannot_be_rewritten() -> None:
    gate = DisclosureGate(FIELDS, TraceRecorder())
    decision = gate.decide("email", message_id=1, turn=0, via="model")
    with pytest.raises(ValidationError):
        decision.outcome = "not_held"  # type: ignore[misc]
    (fact,) = gate.memory()
    with pytest.raises(ValidationError):
        fact.value = "someone else's address"  # type: ignore[misc]
    assert gate.memory()[0].value == "It's ada@example.com."
