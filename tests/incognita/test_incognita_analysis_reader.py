"""The model-free reader and the five failure labels on hand-built traces (the Incognita paper
§4.2-4.3).

Task sd-07 (pay an order with the saved gift card): identity lookup by name and zip, the
profile read, then the payment change. Its reference needs the name, zip, order id and
payment fields, the lookup's result and the profile's payment methods; three role
assignments under social access (identity lookup, account, pending-order operations).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered, ModelCall, TraceEvent
from confide.envs.incognita import events as ev
from confide.envs.incognita.outputs.failures import (
    ACQUISITION_STAGE,
    NO_ACTION,
    FailureType,
    label_failure,
    trial_counts,
    unanswerable_questions,
)
from confide.envs.incognita.outputs.reader import (
    TrialReading,
    read_trial,
    same_call,
    trial_events,
)
from confide.envs.incognita.reference import (
    ReferenceDataError,
    TaskReference,
    load_reference,
)
from confide.envs.incognita.tools import SERVICE_TOOLS

CARD = "sd-07-pay-with-gift-card"
DESKS = {
    "Auden": "identity_lookup",
    "Bryn": "account",
    "Corin": "pending_orders",
    "Dara": "catalogue",
    "Emrys": "order_records",
    "Faye": "returns_exchanges",
}
LOOKUP = {"first_name": "Mirela", "last_name": "Zeller", "zip": "30361"}
PROFILE = {"user_id": "mirela_zeller_4761"}
PAY = {"order_id": "#W3821031", "payment_method_id": "gift_card_3294111"}


@cache
def task() -> TaskReference:
    return load_reference().task(CARD)


class Script:
    """Builds a trace event list the way the environment would record it."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self._ids = 0

    def say(self, sender: str, recipient: str, text: str = "...") -> Script:
        self._ids += 1
        message = Message(
            id=self._ids, sender=sender, recipients=(recipient,), channel=Channel.dm(), text=text
        )
        self.events.append(MessageDelivered(message=message))
        return self

    def ask(self, token: str | None, *, outcome: str = "released") -> Script:
        self.say("AGENT", "USER", f"asking for {token}")
        data: dict[str, Any] = {"message_id": self._ids, "field": token, "via": "keywords"}
        self.events.append(ev.GateRequest(data=ev.GateRequestData(**data, outcome=outcome)))
        if outcome == "released":
            self.events.append(ev.GateRelease(data=ev.GateReleaseData(**data, order=0)))
        self.say("USER", "AGENT", "here you go")
        return self

    def tool(
        self, proposer: str, name: str, arguments: dict[str, Any], *, ok: bool = True
    ) -> Script:
        kind = str(SERVICE_TOOLS[name].kind)
        base = {"call_id": len(self.events), "proposer": proposer, "tool": name,
                "arguments": arguments}
        self.events.append(ev.ToolProposed(data=ev.ToolCallData(**base)))
        self.events.append(ev.ToolAccepted(data=ev.ToolAcceptedData(**base, kind=kind)))
        self.events.append(ev.ToolExecuted(data=ev.ToolExecutedData(
            **base, kind=kind, ok=ok, error_code=None, error=None, result=None, state_hash=None,
        )))
        return self

    def via_desk(self, desk: str, name: str, arguments: dict[str, Any], **kw: Any) -> Script:
        self.say("AGENT", desk, f"please run {name}")
        self.tool(desk, name, arguments, **kw)
        return self.say(desk, "AGENT", "done")

    def gather_everything(self) -> Script:
        for token in ("name", "zip", "order_id", "payment"):
            self.ask(token)
        self.via_desk("Auden", "find_user_id_by_name_zip", LOOKUP)
        return self.via_desk("Bryn", "get_user_details", PROFILE)


def read(script: Script, condition: str = "social") -> TrialReading:
    desk_roles = DESKS if condition == "social" else None
    return read_trial(task(), trial_events(script.events, condition, desk_roles))


# ----- one trace per failure type, and a successful non-reference trajectory -----------------


def test_never_requested() -> None:
    script = Script().say("AGENT", "USER", "Hello! How can I help?").say("USER", "AGENT", "hi")
    script.ask(None, outcome="no_field")
    reading = read(script)
    assert not reading.action_attempted
    assert set(reading.items_missing) == {
        "field:name",
        "field:zip",
        "call:0",
        "field:order_id",
        "call:1",
        "field:payment",
    }
    assert not reading.approached_missing
    assert label_failure(reading, success=False) is FailureType.NEVER_REQUESTED


def test_requested_but_not_obtained() -> None:
    """The agent found the account desk but the profile read never happened."""
    script = Script()
    for token in ("name", "zip", "order_id", "payment"):
        script.ask(token)
    script.via_desk("Auden", "find_user_id_by_name_zip", LOOKUP)
    script.say("AGENT", "Bryn", "Which gift cards does this customer have?")
    script.say("Bryn", "AGENT", "I need more details.")
    reading = read(script)
    assert reading.items_missing == ("call:1",)
    assert reading.missing_service == ("call:1",) and reading.missing_customer == ()
    assert reading.approached_missing
    assert label_failure(reading, success=False) is FailureType.REQUESTED_NOT_OBTAINED


def test_asking_the_customer_for_a_missing_field_is_approaching_it() -> None:
    script = Script().ask("payment", outcome="not_held")
    reading = read(script)
    assert "field:payment" in reading.missing_customer
    assert reading.approached_missing
    assert label_failure(reading, success=False) is FailureType.REQUESTED_NOT_OBTAINED


def test_obtained_but_not_delivered() -> None:
    script = Script().gather_everything()
    script.say("AGENT", "Corin", "Can you change the payment method of an order?")
    script.say("Corin", "AGENT", "Yes, I can.")
    reading = read(script)
    assert reading.items_missing == ()
    assert reading.information_acquisition == 1.0
    assert reading.role_identification == pytest.approx(2 / 3)
    assert reading.holder_contacted == 1.0
    assert reading.execution == pytest.approx(2 / 3)
    assert reading.execution_name == "assignment"
    assert label_failure(reading, success=False) is FailureType.OBTAINED_NOT_DELIVERED


def test_delivered_but_incorrect() -> None:
    """The payment change ran, but onto the wrong method."""
    script = Script().gather_everything()
    wrong = {**PAY, "payment_method_id": "paypal_0000000"}
    script.via_desk("Corin", "modify_pending_order_payment", wrong)
    reading = read(script)
    assert reading.action_attempted and not reading.required_actions_done
    assert reading.outside_writes == 1
    assert reading.role_identification == 1.0
    assert reading.execution == pytest.approx(2 / 3)
    assert label_failure(reading, success=False) is FailureType.DELIVERED_INCORRECT


def test_an_extra_write_outside_the_reference_is_incorrect() -> None:
    script = Script().gather_everything()
    script.via_desk("Corin", "modify_pending_order_payment", PAY)
    assert read(script).outside_writes == 0
    refused = {"order_id": "#W3821031", "reason": "because"}
    script.via_desk("Corin", "cancel_pending_order", refused, ok=False)
    assert read(script).outside_writes == 0  # refused by the database: nothing changed
    script.via_desk("Corin", "cancel_pending_order", {**refused, "reason": "no longer needed"})
    reading = read(script)
    assert reading.required_actions_done and reading.outside_writes == 1
    assert label_failure(reading, success=False) is FailureType.DELIVERED_INCORRECT


def test_correct_but_unconfirmed() -> None:
    """Every reference call done as the reference has it; the trial failed anyway (say, the
    judge channel)."""
    script = Script().gather_everything()
    script.via_desk("Corin", "modify_pending_order_payment", PAY)
    reading = read(script)
    assert reading.role_identification == 1.0
    assert reading.information_acquisition == 1.0
    assert reading.execution == 1.0
    assert label_failure(reading, success=False) is FailureType.CORRECT_UNCONFIRMED


def test_successful_non_reference_trajectory_is_not_a_failure() -> None:
    """The agent skipped the lookups (the customer knew the method) and only changed the
    payment: far from the reference, but the evaluator passed it."""
    script = Script().ask("order_id").ask("payment")
    script.via_desk("Corin", "modify_pending_order_payment", PAY)
    reading = read(script)
    assert reading.information_acquisition is not None and reading.information_acquisition < 1
    assert reading.role_identification == pytest.approx(1 / 3)
    assert label_failure(reading, success=True) is None
    # Had the judge failed it, the action would still count as correctly delivered.
    assert label_failure(reading, success=False) is FailureType.CORRECT_UNCONFIRMED


# ----- conditions, absent processes, argument matching ---------------------------------------


def test_direct_condition_has_no_role_identification() -> None:
    script = Script()
    for token in ("name", "zip", "order_id", "payment"):
        script.ask(token)
    script.tool("AGENT", "find_user_id_by_name_zip", LOOKUP)
    script.tool("AGENT", "get_user_details", PROFILE)
    reading = read(script, "direct")
    assert reading.role_identification is None and reading.holder_contacted is None
    assert reading.execution_name == "execution"
    assert reading.execution == pytest.approx(2 / 3)
    assert label_failure(reading, False) is FailureType.OBTAINED_NOT_DELIVERED


def test_direct_approach_is_calling_the_read_tool() -> None:
    script = Script().tool("AGENT", "get_user_details", {"user_id": "someone_else"}, ok=False)
    reading = read(script, "direct")
    assert reading.approached_missing
    assert label_failure(reading, False) is FailureType.REQUESTED_NOT_OBTAINED


def test_indirect_executor_is_the_declared_desk() -> None:
    script = Script()
    for token in ("name", "zip", "order_id", "payment"):
        script.ask(token)
    script.via_desk("Lumen", "find_user_id_by_name_zip", LOOKUP)
    script.via_desk("Lumen", "get_user_details", PROFILE)
    script.via_desk("Lumen", "modify_pending_order_payment", PAY)
    reading = read(script, "indirect")
    assert reading.role_identification is None
    assert reading.execution == 1.0 and reading.information_acquisition == 1.0
    # The same calls by a participant that is not the expected executor do not count.
    assert read(script, "social").execution == 0.0


def test_social_needs_the_desk_map() -> None:
    with pytest.raises(ReferenceDataError, match="desk-to-role map"):
        trial_events([], "social", None)


def test_argument_normalisation() -> None:
    lookup = task().calls[0]
    assert same_call(
        "find_user_id_by_name_zip",
        {"first_name": " mirela", "last_name": "ZELLER", "zip": "30361"},
        lookup,
    )
    assert not same_call(
        "find_user_id_by_name_zip",
        {"first_name": "Mirela", "last_name": "Zeller", "zip": "30362"},
        lookup,
    )
    exchange = load_reference().task("sd-12-mixer-and-sleeping-bag").calls[2]
    pairs = dict(exchange.arguments)
    assert same_call(exchange.tool, pairs, exchange)
    assert not same_call(exchange.tool, {**pairs, "order_id": "#W0000000"}, exchange)
    returns = load_reference().task("sd-17-cheaper-soundbar-return-trackballs").calls[-1]
    assert same_call(returns.tool, dict(returns.arguments), returns)
    shorter: dict[str, JsonValue] = {**returns.arguments, "item_ids": ["2117852126"]}
    assert not same_call(returns.tool, shorter, returns)


# ----- counts -----------------------------------------------------------------------------


def test_unanswerable_questions_and_actions_by_hand() -> None:
    script = Script()
    script.say("AGENT", "Dara", "Can you look up a customer?")  # unanswerable: no tool
    script.say("Dara", "AGENT", "That is not something I handle.")
    script.via_desk("Auden", "find_user_id_by_name_zip", LOOKUP)  # answered from records
    script.say("AGENT", "Bryn", "profile please")
    script.tool("Bryn", "get_user_details", {"user_id": "nobody"}, ok=False)  # refused
    script.say("Bryn", "AGENT", "No such customer.")  # unanswerable
    script.say("AGENT", "Corin", "hello?")  # never answered: not counted
    assert unanswerable_questions(script.events, list(DESKS)) == 2
    counts = trial_counts(script.events, list(DESKS))
    assert counts.unanswerable_questions == 2
    assert counts.agent_actions == 4
    assert trial_counts(script.events, []).unanswerable_questions is None


def test_a_restatement_awaiting_confirmation_is_not_unanswerable() -> None:
    script = Script()
    script.say("AGENT", "Corin", "Please switch order #W3821031 to gift_card_3294111.")
    script.say("Corin", "AGENT", "To confirm: switch the payment to the gift card?")
    script.say("AGENT", "Corin", "Yes, please go ahead.")
    script.tool("Corin", "modify_pending_order_payment", PAY)
    script.say("Corin", "AGENT", "Done.")
    assert unanswerable_questions(script.events, list(DESKS)) == 0
    script.say("AGENT", "Corin", "And what is my email?")  # out of remit, twice
    script.say("Corin", "AGENT", "I cannot help with that.")
    script.say("AGENT", "Corin", "Please, my email?")
    script.say("Corin", "AGENT", "I cannot help with that.")
    assert unanswerable_questions(script.events, list(DESKS)) == 2


def test_costs_split_agent_and_total() -> None:
    def call(seat: str, cost: float | None) -> ModelCall:
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "cost_usd": cost}
        return ModelCall(seat=seat, model="m", messages=[], completion={"text": "", "usage": usage})

    events: list[TraceEvent] = [call("AGENT", 0.25), call("USER", 0.5), call("Bryn", None)]
    events.append(Script().tool("AGENT", "get_user_details", PROFILE).events[0])
    counts = trial_counts(events, [])
    assert counts.cost_agent == 0.25 and counts.cost_total is None  # not a silent $0.75
    assert counts.unpriced_calls == 1 and counts.unpriced_agent_calls == 0
    assert counts.agent_actions == 1
    priced = trial_counts(events[:2], [])
    assert priced.cost_total == 0.75 and priced.unpriced_calls == 0


# ----- the labels are exclusive and exhaustive over failed trials -----------------------------


@given(
    success=st.booleans(),
    attempted=st.booleans(),
    missing=st.lists(st.sampled_from(["field:order_id", "call:1"]), unique=True),
    approached=st.booleans(),
    done=st.booleans(),
    outside=st.integers(min_value=0, max_value=2),
)
def test_labels_follow_the_first_match_order(
    success: bool, attempted: bool, missing: list[str], approached: bool, done: bool, outside: int
) -> None:
    reading = TrialReading(
        card_id=CARD,
        condition="social",
        role_identification=None,
        holder_contacted=None,
        information_acquisition=None,
        execution=None,
        execution_name="assignment",
        items_missing=tuple(missing),
        missing_customer=tuple(m for m in missing if m.startswith("field:")),
        missing_service=tuple(m for m in missing if m.startswith("call:")),
        approached_missing=approached,
        action_attempted=attempted,
        required_actions_done=done,
        outside_writes=outside,
    )
    label = label_failure(reading, success)
    if success:
        assert label is None
        return
    assert label is not None
    assert (label in NO_ACTION) == (not attempted)
    assert (label in ACQUISITION_STAGE) == (not attempted and bool(missing))
    assert (label is FailureType.CORRECT_UNCONFIRMED) == (attempted and done and outside == 0)
