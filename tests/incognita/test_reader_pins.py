"""The model-free reader pinned on behaviours its first tests left open (the Incognita
paper §4.2): a trace read back from disk reads as the one written, the condition decides
who counts and which processes exist, a role is identified only by its holder running its
tool, contact is the agent's own messages, and arguments compare exactly where the tools
do (only identity lookups ignore case; item lists pair item with replacement)."""

from __future__ import annotations

import json

import pytest
from pydantic import JsonValue, ValidationError
from test_incognita_analysis_reader import DESKS, LOOKUP, PAY, PROFILE, Script, task

from confide.core.trace import TraceEvent
from confide.core.trace.events import event_adapter
from confide.core.trace.reader import benchmark_events
from confide.envs.incognita.outputs.reader import (
    TrialReading,
    holders_for,
    read_trial,
    same_call,
    trial_events,
)
from confide.envs.incognita.reference import ReferenceCall, ReferenceDataError


def _from_disk(events: list[TraceEvent]) -> list[TraceEvent]:
    """The events as a trace file gives them back (JSON lines parsed again)."""
    adapter = event_adapter(benchmark_events("incognita"))
    return [adapter.validate_json(adapter.dump_json(e)) for e in events]


def _read(events: list[TraceEvent], condition: str) -> TrialReading:
    desk_roles = DESKS if condition == "social" else None
    return read_trial(task(), trial_events(events, condition, desk_roles))


def _complete(proposer: str | None = None) -> Script:
    """Every reference call done; by `proposer` (a desk name) or by the right desk."""
    script = Script().gather_everything() if proposer is None else Script()
    if proposer is not None:
        for token in ("name", "zip", "order_id", "payment"):
            script.ask(token)
        script.via_desk(proposer, "find_user_id_by_name_zip", LOOKUP)
        script.via_desk(proposer, "get_user_details", PROFILE)
    return script.via_desk(proposer or "Corin", "modify_pending_order_payment", PAY)


@pytest.mark.parametrize(
    ("condition", "script"),
    [("direct", None), ("indirect", "Lumen"), ("social", "")],
)
def test_a_trace_read_back_from_disk_reads_the_same(condition: str, script: str | None) -> None:
    if script is None:
        built = Script()
        for token in ("name", "zip", "order_id", "payment"):
            built.ask(token)
        built.tool("AGENT", "find_user_id_by_name_zip", LOOKUP)
        built.tool("AGENT", "get_user_details", PROFILE)
        built.tool("AGENT", "modify_pending_order_payment", PAY)
    else:
        built = _complete(script or None)
    in_memory = _read(built.events, condition)
    # the condition too comes from a file (the trace header), not from a literal
    parsed_condition = json.loads(json.dumps(condition))
    from_disk = _read(_from_disk(built.events), parsed_condition)
    assert from_disk == in_memory
    assert from_disk.execution == 1.0 and from_disk.information_acquisition == 1.0
    assert from_disk.execution_name == ("execution" if condition == "direct" else "assignment")
    social = condition == "social"
    assert (from_disk.role_identification, from_disk.holder_contacted) == (
        (1.0, 1.0) if social else (None, None)
    )


def test_unknown_conditions_are_refused_by_name() -> None:
    for condition in ("centralized", "native", "tiered", "zonal"):
        with pytest.raises(ReferenceDataError, match=f"unknown condition '{condition}'"):
            holders_for(condition)
    assert holders_for(json.loads('"direct"')) == {"agent": "AGENT"}
    assert holders_for("indirect") == {"service": "Lumen"}


def test_contact_is_only_the_agents_own_messages() -> None:
    script = Script()
    script.say("Auden", "Bryn", "desk to desk").say("Corin", "Auden", "desk to desk")
    script.say("USER", "Corin", "customer to desk").say("ADA", "Bryn", "whoever it is")
    reading = _read(script.events, "social")
    assert reading.holder_contacted == 0.0
    assert not reading.approached_missing  # no message of the agent reached a holder
    script.say("AGENT", "Bryn", "profile please")
    assert _read(script.events, "social").holder_contacted == pytest.approx(1 / 3)


def test_nobody_contacted_is_zero_not_full_contact() -> None:
    reading = _read(Script().ask("name").events, "social")
    assert reading.holder_contacted == 0.0 and reading.role_identification == 0.0


def test_a_role_is_identified_only_by_its_holder_running_its_tool() -> None:
    script = Script()
    script.tool("Auden", "get_user_details", PROFILE)  # another desk ran the account read
    script.tool("Bryn", "modify_user_address", {"user_id": "x"}, ok=False)  # not its tool
    script.tool("Bryn", "find_user_id_by_email", {"email": "x@y.z"}, ok=False)  # nor this
    script.tool("Corin", "get_user_details", PROFILE)  # a later desk, the account's tool
    assert _read(script.events, "social").role_identification == 0.0
    script.tool("Bryn", "get_user_details", {"user_id": "x"}, ok=False)  # refused, but its
    assert _read(script.events, "social").role_identification == pytest.approx(1 / 3)


def test_direct_approach_is_the_read_tool_not_any_tool() -> None:
    script = Script().tool("AGENT", "modify_pending_order_payment", PAY, ok=False)
    script.tool("AGENT", "find_user_id_by_email", {"email": "x@y.z"}, ok=False)
    reading = _read(script.events, "direct")
    assert reading.action_attempted and not reading.approached_missing


def test_only_identity_lookups_ignore_case() -> None:
    write = task().calls[2]
    assert same_call(write.tool, dict(PAY), write)
    assert not same_call(write.tool, {**PAY, "order_id": PAY["order_id"].lower()}, write)
    assert not same_call(
        write.tool, {**PAY, "payment_method_id": PAY["payment_method_id"].upper()}, write
    )


def _exchange(items: list[str], new: list[str]) -> ReferenceCall:
    return ReferenceCall(
        index=0, tool="exchange_delivered_order_items", kind="write",
        arguments={"order_id": "#W1", "item_ids": list(items), "new_item_ids": list(new),
                   "payment_method_id": "gift_card_1"},
        origin="gold", counted=True, desk="returns_exchanges",
        executors={"direct": "agent", "indirect": "service", "social": "returns_exchanges"},
        sources=[],
    )


def _arguments(items: list[str], new: list[str]) -> dict[str, JsonValue]:
    return {"order_id": "#W1", "item_ids": list(items), "new_item_ids": list(new),
            "payment_method_id": "gift_card_1"}


def test_item_lists_compare_as_pairs_of_item_and_replacement() -> None:
    call = _exchange(["1", "2"], ["10", "20"])
    assert same_call(call.tool, _arguments(["2", "1"], ["20", "10"]), call)  # same pairs
    assert not same_call(call.tool, _arguments(["1", "2"], ["20", "10"]), call)  # swapped
    # more or fewer replacements than items: not the call (and no crash)
    assert not same_call(call.tool, _arguments(["1", "2"], ["10", "20", "30"]), call)
    assert not same_call(call.tool, _arguments(["1", "2"], ["10"]), call)
    # lists of unequal length still compare their replacements
    uneven = _exchange(["1", "2"], ["10"])
    assert same_call(uneven.tool, _arguments(["2", "1"], ["10"]), uneven)
    assert not same_call(uneven.tool, _arguments(["1", "2"], ["20"]), uneven)
    # long lists pair the same way (lengths past any small-number cache)
    items = [str(i) for i in range(300)]
    new = [str(1000 + i) for i in range(300)]
    long = _exchange(items, new)
    assert same_call(long.tool, _arguments(items[::-1], new[::-1]), long)


def test_what_the_reader_read_cannot_be_altered() -> None:
    trial = trial_events(Script().tool("AGENT", "get_user_details", PROFILE).events, "direct")
    (executed,) = trial.executed
    with pytest.raises(ValidationError):
        executed.ok = False  # type: ignore[misc]
    with pytest.raises(ValidationError):
        trial.condition = "social"  # type: ignore[misc]
    reading = read_trial(task(), trial)
    with pytest.raises(ValidationError):
        reading.execution = 1.0  # type: ignore[misc]


def _plain(tool: str, **arguments: JsonValue) -> ReferenceCall:
    return ReferenceCall(
        index=0, tool=tool, kind="write", arguments=arguments, origin="gold", counted=True,
        desk="pending_orders", sources=[],
        executors={"direct": "agent", "indirect": "service", "social": "pending_orders"},
    )


def test_free_text_is_ignored_but_not_what_follows_it() -> None:
    call = _plain("transfer_to_human_agents", summary="the customer is upset", order_id="#W1")
    assert same_call(call.tool, {"summary": "something else", "order_id": "#W1"}, call)
    assert not same_call(call.tool, {"summary": "something else", "order_id": "#W2"}, call)


def test_replacements_without_items_still_compare() -> None:
    call = _plain("exchange_delivered_order_items", new_item_ids=["10"])
    assert same_call(call.tool, {"new_item_ids": ["10"]}, call)
    assert not same_call(call.tool, {"new_item_ids": ["20"]}, call)


def test_in_indirect_access_only_the_declared_desk_executes() -> None:
    script = Script()
    for token in ("name", "zip", "order_id", "payment"):
        script.ask(token)
    for proposer in ("AGENT", "Auden"):  # names that sort before the desk's
        script.tool(proposer, "find_user_id_by_name_zip", LOOKUP)
        script.tool(proposer, "get_user_details", PROFILE)
        script.tool(proposer, "modify_pending_order_payment", PAY)
    reading = _read(script.events, "indirect")
    assert reading.execution == 0.0 and not reading.required_actions_done


def test_a_direct_approach_read_back_from_disk_is_still_an_approach() -> None:
    script = Script().tool("AGENT", "get_user_details", {"user_id": "someone_else"}, ok=False)
    reading = _read(_from_disk(script.events), json.loads('"direct"'))
    assert reading.approached_missing and reading.execution_name == "execution"


def test_in_direct_access_only_the_agents_proposals_approach_a_source() -> None:
    script = Script().tool("USER", "get_user_details", PROFILE, ok=False)
    script.tool("ADA", "get_user_details", PROFILE, ok=False)
    script.tool("Bryn", "find_user_id_by_name_zip", LOOKUP, ok=False)
    assert not _read(script.events, "direct").approached_missing


def test_social_read_from_a_file_without_desk_roles_asks_for_them() -> None:
    with pytest.raises(ReferenceDataError, match="desk-to-role map"):
        holders_for(json.loads('"social"'))
