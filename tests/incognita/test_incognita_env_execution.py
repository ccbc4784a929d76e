"""The execution layer (the Incognita paper §3.3): ownership, admissibility, execution, events."""

from _incognita_env_support import task

from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.incognita.execution import ExecutionLayer

OWNERS = {"get_order_details": "Dara", "cancel_pending_order": "Bryn"}


def _layer() -> tuple[ExecutionLayer, TraceRecorder]:
    trace = TraceRecorder()
    world = task("sd-01-cancel-blanket").world.fork()
    return ExecutionLayer(world, OWNERS, trace), trace


def _events(trace: TraceRecorder) -> list[tuple[str, dict[str, object]]]:
    return [(e.name, e.fields()) for e in trace.events if isinstance(e, EnvEvent)]


def test_a_desk_proposing_a_tool_it_does_not_own_is_rejected_and_recorded() -> None:
    layer, trace = _layer()
    before = layer.world.state_hash()
    args = {"order_id": "#W4979192", "reason": "no longer needed"}
    outcome = layer.propose("Dara", "cancel_pending_order", args, turn=4)
    assert outcome.status == "rejected" and outcome.reason == "not_owner"
    assert outcome.text == "Rejected: you do not hold the tool 'cancel_pending_order'"
    assert layer.world.state_hash() == before
    assert [name for name, _ in _events(trace)] == ["tool_proposed", "tool_rejected"]
    rejected = _events(trace)[1][1]
    assert rejected["reason"] == "not_owner" and rejected["proposer"] == "Dara"
    assert rejected["arguments"] == args
    assert all(e.visible_to == ["Dara"] and e.round == 4
               for e in trace.events if isinstance(e, EnvEvent))


def test_unknown_tool_and_inadmissible_arguments_are_rejected_without_running() -> None:
    layer, trace = _layer()
    unknown = layer.propose("Dara", "delete_everything", {})
    assert unknown.reason == "unknown_tool"
    bad = layer.propose("Dara", "get_order_details", {"order_id": 42})
    assert bad.reason == "inadmissible_arguments" and "order_id" in bad.text
    missing = layer.propose("Dara", "get_order_details", {})
    assert missing.reason == "inadmissible_arguments" and "missing argument" in missing.text
    assert [n for n, _ in _events(trace)].count("tool_executed") == 0
    assert [o.call_id for o in (unknown, bad, missing)] == [0, 1, 2]


def test_an_accepted_read_records_its_admitted_arguments_and_result() -> None:
    layer, trace = _layer()
    outcome = layer.propose("Dara", "get_order_details", {"order_id": "#W4979192"})
    assert outcome.status == "ok"
    assert isinstance(outcome.result, dict) and outcome.result["order_id"] == "#W4979192"
    names = [n for n, _ in _events(trace)]
    assert names == ["tool_proposed", "tool_accepted", "tool_executed"]
    accepted, executed = _events(trace)[1][1], _events(trace)[2][1]
    assert accepted == {"call_id": 0, "proposer": "Dara", "tool": "get_order_details",
                        "kind": "read", "arguments": {"order_id": "#W4979192"}}
    assert executed["ok"] is True and executed["state_hash"] is None
    assert executed["result"] == outcome.result


def test_a_write_changes_the_world_and_a_refused_write_does_not() -> None:
    layer, trace = _layer()
    before = layer.world.state_hash()
    bad = layer.propose("Bryn", "cancel_pending_order",
                        {"order_id": "#W4979192", "reason": "too expensive"})
    assert bad.status == "error" and bad.error_code is not None
    assert bad.text.startswith("Error: ")
    assert layer.world.state_hash() == before
    good = layer.propose("Bryn", "cancel_pending_order",
                         {"order_id": "#W4979192", "reason": "no longer needed"})
    assert good.status == "ok"
    assert layer.world.orders["#W4979192"].status == "cancelled"
    executed = [d for n, d in _events(trace) if n == "tool_executed"]
    assert executed[0]["ok"] is False and executed[0]["error_code"] == bad.error_code
    assert executed[1]["state_hash"] == layer.world.state_hash() != before
    again = layer.propose("Bryn", "cancel_pending_order",
                          {"order_id": "#W4979192", "reason": "no longer needed"})
    assert again.status == "error"  # writes are irreversible: no second cancellation
