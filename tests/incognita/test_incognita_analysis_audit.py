"""Appendix B.2's first audit on hand-built traces: crediting accepted non-reference reads.

Task sd-07: the agent gathers every customer field and the identity lookup, then asks the
account desk (Bryn), which runs a read the reference does not have instead of the profile
read, so the profile's payment method (``call:1``, value gift_card_3294111) stays missing.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue
from test_incognita_analysis_reader import DESKS, LOOKUP, Script, task

from confide.core.trace import TraceEvent
from confide.envs.incognita import events as ev
from confide.envs.incognita.outputs.audit import audit_reads, nonreference_returns
from confide.envs.incognita.outputs.failures import FailureType, label_failure
from confide.envs.incognita.outputs.reader import read_trial, trial_events


def trial(
    result: JsonValue, tokens: tuple[str, ...] = ("name", "zip", "order_id", "payment")
) -> list[TraceEvent]:
    script = Script()
    for token in tokens:
        script.ask(token)
    script.via_desk("Auden", "find_user_id_by_name_zip", LOOKUP)
    script.say("AGENT", "Bryn", "which payment methods does the customer have?")
    base: dict[str, Any] = {"call_id": 99, "proposer": "Bryn", "tool": "get_order_details",
                            "arguments": {"order_id": "#W3821031"}}
    script.events.append(ev.ToolExecuted(data=ev.ToolExecutedData(
        **base, kind="read", ok=True, error_code=None, error=None, result=result,
        state_hash=None,
    )))
    return script.events


def audit(events: list[TraceEvent]) -> tuple[FailureType | None, Any]:
    trial_data = trial_events(events, "social", DESKS)
    reading = read_trial(task(), trial_data)
    failure = label_failure(reading, success=False)
    return failure, audit_reads(events, task(), trial_data, reading, failure)


def test_a_return_holding_the_needed_value_is_credited_by_both_checks() -> None:
    events = trial({"order_id": "#W3821031",
                    "payment_history": [{"payment_method_id": "gift_card_3294111"}]})
    assert len(nonreference_returns(events, task())) == 1
    failure, result = audit(events)
    assert failure is FailureType.REQUESTED_NOT_OBTAINED
    assert result.nonreference_reads == 1
    assert result.lenient is FailureType.OBTAINED_NOT_DELIVERED
    assert result.strict is FailureType.OBTAINED_NOT_DELIVERED


def test_a_return_without_it_is_credited_only_by_the_lenient_check() -> None:
    failure, result = audit(trial({"order_id": "#W3821031", "status": "pending"}))
    assert failure is FailureType.REQUESTED_NOT_OBTAINED
    assert result.lenient is FailureType.OBTAINED_NOT_DELIVERED
    assert result.strict is FailureType.REQUESTED_NOT_OBTAINED  # no label change


def test_a_customer_fact_never_asked_for_moves_the_label_to_never_requested() -> None:
    failure, result = audit(trial({"status": "pending"}, tokens=("name", "zip", "order_id")))
    assert failure is FailureType.REQUESTED_NOT_OBTAINED  # Bryn, holder of call:1, was asked
    # crediting the service fact leaves only the payment field, which was never requested
    assert result.lenient is FailureType.NEVER_REQUESTED
    assert result.strict is FailureType.REQUESTED_NOT_OBTAINED


def test_the_audit_leaves_other_labels_and_reference_reads_alone() -> None:
    script = Script().say("AGENT", "Bryn", "hello")
    script.via_desk("Auden", "find_user_id_by_name_zip", LOOKUP)  # a reference read
    assert nonreference_returns(script.events, task()) == []
    failure, result = audit(script.events)
    assert failure is FailureType.REQUESTED_NOT_OBTAINED
    assert (result.nonreference_reads, result.lenient, result.strict) == (0, None, None)
    failure, result = audit(Script().events)  # nothing approached: not audited
    assert failure is FailureType.NEVER_REQUESTED and result.lenient is None
