"""Model-driven participants: mock/incognita in every seat and role, the agent's output
contract and repair loop, ownership enforcement for model desks, the customer prompt."""

import json
from pathlib import Path
from typing import Any

import pytest
from _incognita_env_support import CONDITIONS, MOCK, MOCK_ROLES, run, task
from typer.testing import CliRunner

from confide.cli.main import app
from confide.core.trace import ModelCall
from confide.envs.incognita.actions import AgentObservation
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.llm.types import ToolCall
from confide.runner.models import RunModels
from confide.runner.results import read_csv

FINAL = '{"recipient": "ENVIRONMENT", "message": "done", "message_type": "FINAL"}'


def test_cli_mock_models_drive_every_participant_in_every_condition(tmp_path: Path) -> None:
    args = ["run", "incognita", "--lineup", MOCK, "--out", str(tmp_path / "run"), "--no-progress"]
    for role, spec in MOCK_ROLES.items():
        args += ["--role", f"{role}={spec}"]
    for condition in CONDITIONS:
        args += ["--condition", condition]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = read_csv(tmp_path / "run" / "results.csv")
    assert len(rows) == 54 and {r["status"] for r in rows} == {"ok"}
    assert {r["ended"] for r in rows} == {"final"}
    assert all(int(r["agent_calls"]) >= 3 and int(r["customer_calls"]) >= 1
               and int(r["gate_calls"]) >= 1 for r in rows)
    for row in rows:
        assert (int(row["desk_calls"]) > 0) == (int(row["messages_to_desks"]) > 0)
        assert (int(row["messages_to_desks"]) == 0) == (row["condition"] == "direct")
        assert int(row["judge_calls"]) == (1 if row["outputs_pass"] != "" else 0)


@pytest.mark.parametrize("condition", CONDITIONS)
def test_mock_agent_reaches_the_tools_through_the_right_holder(condition: str) -> None:
    episode = run(task("sd-10-cancel-desk-order"), condition, MOCK, roles=MOCK_ROLES)
    executed = [e.fields() for e in episode.env("tool_executed")]
    assert [(d["tool"], d["ok"]) for d in executed] == [
        ("find_user_id_by_email", True), ("get_user_details", True)]
    assert executed[0]["result"] == "quentin_rosales_8072"
    roles = episode.env("episode_setup")[0].data.desk_roles
    for data in executed:
        if condition == "direct":
            assert data["proposer"] == "AGENT"
        elif condition == "indirect":
            assert data["proposer"] == "Lumen"
        else:
            holder = "identity_lookup" if data["tool"].startswith("find") else "account"
            assert roles[data["proposer"]] == holder
    released = [e.data.field for e in episode.env("gate_release")]
    assert released == ["email"] and episode.env("gate_release")[0].data.via == "model"
    assert episode.row["success"] == 0 and episode.row["ended"] == "final"


def _rogue_desk(messages: list[ChatMessage], config: GenerateConfig) -> str | ToolCall:
    """A desk that tries to change a profile address whatever it is asked (a native call,
    whether or not the tool is one it holds)."""
    if messages[-1].role == "tool":
        return "I have dealt with it."
    address = {"user_id": "quentin_rosales_8072", "address1": "1 Elm St", "address2": "",
               "city": "Reno", "state": "NV", "country": "USA", "zip": "89501"}
    return ToolCall(id="call-0", name="modify_user_address", arguments=json.dumps(address))


@pytest.fixture
def rogue() -> Any:
    register_mock("incognita-rogue", lambda **_: MockModel(_rogue_desk, name="incognita-rogue"),
                  replace=True)
    yield "mock/incognita-rogue"
    unregister_mock("incognita-rogue")


def test_model_desk_proposing_a_tool_it_does_not_hold_is_rejected(rogue: str) -> None:
    roles = {**MOCK_ROLES, "desk": rogue}
    episode = run(task("sd-10-cancel-desk-order"), "social", MOCK, roles=roles, observe=True)
    desk_roles = episode.env("episode_setup")[0].data.desk_roles
    proposals = [e.fields() for e in episode.env("tool_proposed")]
    assert proposals, "the agent never reached a desk"
    rejected = {e.data.call_id: e.fields() for e in episode.env("tool_rejected")}
    for data in proposals:
        if desk_roles[data["proposer"]] == "account":
            assert data["call_id"] not in rejected
        else:
            assert rejected[data["call_id"]]["reason"] == "not_owner"
    assert all(e.visible_to == [e.data.proposer] for e in episode.env("tool_rejected"))
    # the agent saw only the desks' replies, never a tool outcome
    for observation in episode.observations["AGENT"]:
        assert isinstance(observation, AgentObservation)
        assert all(item.tool is None for item in observation.history)
        assert not any("Rejected" in (item.message.text or "") for item in observation.history
                       if item.message is not None)


def _agent_run(outputs: list[Any], condition: str, **kwargs: Any) -> Any:
    tool_mode = kwargs.pop("tool_mode", "native")
    models = RunModels(options={"outputs": outputs, "tool_mode": tool_mode})
    return run(task("sd-01-cancel-blanket"), condition, "mock/agent-script", models=models,
               **kwargs)


def test_agent_output_is_repaired_with_a_message_naming_the_problem() -> None:
    bad = '{"recipient": "Vega", "message": "hi", "message_type": "MESSAGE"}'
    good = json.dumps({"recipient": "USER", "message": "What is the order number?",
                       "message_type": "MESSAGE"})
    episode = _agent_run([bad, good, FINAL], "indirect")
    calls = [e for e in episode.trace.events if isinstance(e, ModelCall)]
    assert len(calls) == 3
    repair = calls[1].messages[-1]["content"]
    assert "field `recipient`" in repair and "'Lumen'" in repair and "'Vega'" in repair
    sent = [m for m in episode.postbox_log if m.sender == "AGENT"]
    assert [(m.recipients, m.text) for m in sent] == [(("USER",), "What is the order number?")]
    assert episode.row["turns"] == 2 and episode.row["invalid_turns"] == 0


def test_unusable_agent_turns_are_spent_and_the_budget_ends_the_episode() -> None:
    episode = _agent_run(["not json at all"] * 9, "direct", options={"max_turns": 2})
    assert [e.data.participant for e in episode.env("invalid_action")] == ["AGENT", "AGENT"]
    assert episode.env("budget_exhausted")[0].fields() == {"turns": 2}
    assert episode.row["ended"] == "budget" and episode.row["turns"] == 2
    assert episode.row["agent_calls"] == 6  # three repair attempts per turn


CALL_JSON = '{"tool": "get_order_details", "arguments": {"order_id": "#W4979192"}}'
CALL = ToolCall(id="c1", name="get_order_details", arguments='{"order_id": "#W4979192"}')


def test_direct_agent_calls_tools_natively_and_reads_results() -> None:
    direct = _agent_run([CALL, FINAL], "direct")
    executed = direct.env("tool_executed")
    assert executed[0].data.proposer == "AGENT" and executed[0].data.ok is True
    first, second = [e for e in direct.trace.events if isinstance(e, ModelCall)]
    # the tools went with the request, the call came back as a call
    offered = [t["name"] for t in first.config["tools"]]
    assert "get_order_details" in offered and len(offered) == 15
    assert first.completion is not None and first.completion["tool_mode"] == "native"
    assert first.completion["tool_calls"] == [CALL.model_dump(mode="json")]
    assert first.completion["text"] == ""
    # the next request carries the call and its result as function-call turns
    call_turn, result_turn = second.messages[-2], second.messages[-1]
    assert call_turn["role"] == "assistant" and call_turn["tool_calls"][0]["name"] == CALL.name
    assert result_turn["role"] == "tool"
    assert result_turn["tool_call_id"] == call_turn["tool_calls"][0]["id"]
    assert result_turn["content"].startswith("{")
    assert "<tools>" not in first.messages[0]["content"]


def test_direct_agent_falls_back_to_json_in_text_and_the_trace_says_so() -> None:
    direct = _agent_run([CALL_JSON, FINAL], "direct", tool_mode="text")
    executed = direct.env("tool_executed")
    assert executed[0].data.proposer == "AGENT" and executed[0].data.ok is True
    first = next(e for e in direct.trace.events if isinstance(e, ModelCall))
    assert first.completion is not None and first.completion["tool_mode"] == "text"
    assert first.completion["tool_calls"][0]["name"] == "get_order_details"


def test_direct_agent_must_make_exactly_one_call_and_no_text() -> None:
    two = (CALL, CALL.model_copy(update={"id": "c2"}))
    direct = _agent_run([two, CALL, FINAL], "direct")
    calls = [e for e in direct.trace.events if isinstance(e, ModelCall)]
    repair = calls[1].messages
    assert "you made 2 tool calls" in repair[-1]["content"]
    # both bad calls went back answered as not run, as function calling requires
    assert [m["role"] for m in repair[-4:]] == ["assistant", "tool", "tool", "user"]
    assert len(direct.env("tool_executed")) == 1


def test_indirect_agent_holds_no_tools() -> None:
    indirect = _agent_run([CALL_JSON, FINAL], "indirect")
    calls = [e for e in indirect.trace.events if isinstance(e, ModelCall)]
    assert "field `tool`" in calls[1].messages[-1]["content"]
    assert "tools" not in calls[0].config
    assert indirect.env("tool_proposed") == [] and indirect.row["ended"] == "final"


def test_customer_prompt_holds_only_released_fields_and_its_requests() -> None:
    card = task("sd-05-return-whole-order")
    episode = run(card, "social", "reference", roles={"customer": MOCK})
    calls = [e.messages for e in episode.trace.events
             if isinstance(e, ModelCall) and e.seat == "USER" and e.purpose == "act"]
    released: list[str] = []
    values = {f.token: f.value for f in card.card.customer_fields}
    releases = iter(e.data.field for e in episode.env("gate_release"))
    for messages, field in zip(calls, releases, strict=False):
        released.append(field)
        prompt = messages[0]["content"]
        assert card.card.requests[0] in prompt and card.card.opening_line in prompt
        # its memory: the system prompt's block and the blocks released since
        memory = "\n".join(block.split("</memory>")[0] for m in messages
                           for block in m["content"].split("<memory>")[1:])
        for token, value in values.items():
            assert (value in memory) == (token in released)
    assert episode.row["gate_releases"] == 3
