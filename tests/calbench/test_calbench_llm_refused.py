"""Refused cheap-talk actions are named in the seat's next message: a
scripted game where agent 0 messages itself, an unknown agent and a closed channel in the
same reply as a valid dm; its next turn message names each refusal, in the wording
Sotopia-ToM uses, and a seat with nothing refused sees no such line."""

from __future__ import annotations

from test_calbench_engine_support import errand, scenario
from test_calbench_llm_support import (
    StepScript,
    dm,
    env_events,
    model_calls,
    registered_mock,
    reply,
    run_llm_episode,
    schedule,
)

from confide.core.refusal import refusal

SCRIPT = {
    (0, "=== ROUND 1 START ==="): [
        reply(
            "",
            dm(0, "note to self"),
            dm(7, "anyone there?"),
            {"type": "all_agent_groupchat", "content": "hello all"},
            dm(1, "Slot 0?"),
        )
    ],
    (1, "=== ROUND 1 START ==="): [reply("", dm(0, "Slot 0 works."))],
    (0, "=== DECISION, round 1 ==="): [reply("", dm(1, "late"), schedule(1, 1))],
    (1, "=== DECISION, round 1 ==="): [reply("", schedule(1, 0))],
    (0, "=== DECISION RETRY: attempt 2 of 4 ==="): [reply("", schedule(1, 0))],
}

REFUSED_TALK = [
    "Your direct message was refused: dm recipient 0 is not another agent id in [0, 3).",
    "Your direct message was refused: dm recipient 7 is not another agent id in [0, 3).",
    "Your all-agent group post was refused: all_agent_groupchat is not open in the dm "
    "condition (open: dm).",
]


def test_the_next_turn_message_names_each_refused_action() -> None:
    task = scenario([[None, errand(1)], [None, None], [errand(2), None]], [(1, (0, 1), (0, 1))])
    script = StepScript(SCRIPT)
    with registered_mock("cal-refused", script) as model:
        result, trace = run_llm_episode(task, f"{model},{model},imap")
    assert script.unused() == []
    invalid = [e.data.reason for e in env_events(trace, "invalid_tool_call")]
    assert len(invalid) == 4
    calls = model_calls(trace, "agent0")
    turn2 = calls[1].messages[-1]["content"]
    assert turn2.splitlines()[:4] == [*REFUSED_TALK, ""]
    assert turn2.splitlines()[4] == "--- CHEAP_TALK, round 1, turn 2 ---"
    # a dm in the (rejected) DECISION batch is refused too, and named in the retry message
    after = [c.messages[-1]["content"] for c in calls[2:]]
    late = refusal("messages are only sent in CHEAP_TALK", what="direct message")
    assert [text.splitlines()[0] for text in after if late in text] == [late]
    assert "=== DECISION RETRY: attempt 2 of 4 ===" in after[-1] and late in after[-1]
    # each refusal is told once; agent 1 had none
    assert all(line not in text for text in after for line in REFUSED_TALK)
    told = [c.messages[-1]["content"] for c in model_calls(trace, "agent1")]
    assert told and not any("was refused" in text for text in told)
    assert result.final_state["resolved"] == {"1": True}
    assert [r["truncated_replies"] for r in result.rows] == [0, 0, 0]
