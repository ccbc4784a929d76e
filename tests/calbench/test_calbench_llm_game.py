"""A hand-checked CalBench game played by LLM agents on a scripted mock (the CalBench paper §A.2,
A.3, A.5): a malformed reply fixed by the repair loop, a step whose every attempt fails
(recorded as invalid, the agent passes), a batch rejected with the exact A.5 conflict and
fixed on retry; schedule, costs, fairness and message counts derived by hand.

Scenario (varied display 1/10/100; internal costs in brackets):

    agent 0: [free, errand 1 (1), errand 2 (1, blocked), free]
    agent 1: [errand 3 (1), free, free, errand 4 (2)]
    agent 2: [free, free, errand 5 (1), free]
    M1 = agents 0, 1 (speaker order 0, 1); M2 = agents 1, 2 (order 2, 1)

Oracle (unique): M1 at slot 0 (agent 1 moves errand 3, cost 1), M2 at slot 1 (free for
both): per-agent cost (0, 1, 0). Played: M1 at slot 3 (agent 1 moves errand 4 to slot 1,
cost 2), M2 at slot 2 (agent 2 moves errand 5 to slot 3, cost 1): real (0, 2, 1), signed
excess (0, 1, 1), mean 2/3, fairness (2/3, 1/3, 1/3). Messages: 0->1, 1->0 in round 1,
1->2, 2->1 in round 2: four in all, sent (1, 2, 1), one per scheduled participant-meeting.
"""

from __future__ import annotations

import itertools

import pytest
from test_calbench_engine_support import VARIED_DISPLAY, errand, scenario
from test_calbench_llm_support import (
    StepScript,
    dm,
    env_events,
    model_calls,
    prompt_text,
    registered_mock,
    reply,
    reschedule,
    run_llm_episode,
    schedule,
)

from confide.core.benchmark import EpisodeResult
from confide.core.trace import MessageDelivered, TraceRecorder
from confide.envs.calbench.scenario import Scenario

MALFORMED = reply("I can move the errand in slot 3.", {"type": "dm", "to": 0})
FIXED_THINKING = "Slot 3 holds an errand I can move."
CONFLICT = (
    "Action 1 (schedule): slot 3 is occupied by errand #4 and no action in the batch moves "
    "it away"
)

SCRIPT = {
    (0, "=== ROUND 1 START ==="): [
        reply("Slot 3 is free for me.", dm(1, "Could we meet in slot 3?"))
    ],
    (1, "=== ROUND 1 START ==="): [
        MALFORMED,
        reply(FIXED_THINKING, dm(0, "Slot 3 works for me.")),
    ],
    (0, "=== DECISION, round 1 ==="): [reply("We agreed on slot 3.", schedule(1, 3))],
    (1, "=== DECISION, round 1 ==="): [reply("Slot 3 it is.", schedule(1, 3))],
    (1, "=== DECISION RETRY: attempt 2 of 4 ==="): [
        reply(
            "Errand 4 has to move first.",
            reschedule(4, 3, 1, "clearing the agreed slot"),
            schedule(1, 3),
        )
    ],
    (2, "=== ROUND 2 START ==="): [
        "not json at all",
        '{"thinking": "x"}',
        reply("x", {"type": "shout", "content": "hi"}),
    ],
    (1, "=== ROUND 2 START ==="): [reply("Slot 2 is free for me.", dm(2, "Can you do slot 2?"))],
    (2, "--- CHEAP_TALK, round 2, turn 2 ---"): [
        reply("My errand there can move.", dm(1, "Yes, slot 2."))
    ],
    (2, "=== DECISION, round 2 ==="): [
        reply("", reschedule(5, 2, 3, "room for the meeting"), schedule(2, 2))
    ],
    (1, "=== DECISION, round 2 ==="): [reply("", schedule(2, 2))],
}


def _scenario() -> Scenario:
    return scenario(
        [
            [None, errand(1), errand(2, blocked=True), None],
            [errand(3), None, None, errand(4, cost=2)],
            [None, None, errand(5), None],
        ],
        [(1, (0, 1), (0, 1)), (2, (1, 2), (2, 1))],
        display=VARIED_DISPLAY,
    )


@pytest.fixture(scope="module")
def game() -> tuple[EpisodeResult, TraceRecorder, StepScript]:
    script = StepScript(SCRIPT)
    with registered_mock("cal-llm-game", script) as model:
        result, trace = run_llm_episode(_scenario(), model)
    return result, trace, script


Game = tuple[EpisodeResult, TraceRecorder, StepScript]


def test_every_scripted_reply_is_used(game: Game) -> None:
    _, _, script = game
    assert script.unused() == []


def test_schedule_costs_and_fairness(game: Game) -> None:
    result, _, _ = game
    final = result.final_state
    assert final["resolved"] == {"1": True, "2": True}
    cal = final["calendars"]
    assert cal[0][3]["meeting_id"] == 1 and cal[1][3]["meeting_id"] == 1
    assert cal[1][1]["errand_id"] == 4 and cal[1][2]["meeting_id"] == 2
    assert cal[2][2]["meeting_id"] == 2 and cal[2][3]["errand_id"] == 5
    rows = {r["agent"]: r for r in result.rows}
    assert [rows[a]["cost_real"] for a in range(3)] == [0, 2, 1]
    assert [rows[a]["cost_oracle"] for a in range(3)] == [0, 1, 0]
    assert [rows[a]["signed_excess"] for a in range(3)] == [0, 1, 1]
    assert [rows[a]["fairness"] for a in range(3)] == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    assert [rows[a]["success"] for a in range(3)] == [1.0, 1.0, 1.0]
    assert result.metrics["cost_real"] == 3 and result.metrics["cost_optimal"] == 1


def test_message_counts(game: Game) -> None:
    result, trace, _ = game
    sent = [(e.message.sender, e.message.recipients, e.message.text) for e in trace.events
            if isinstance(e, MessageDelivered)]
    assert sent == [
        ("agent0", ("agent1",), "Could we meet in slot 3?"),
        ("agent1", ("agent0",), "Slot 3 works for me."),
        ("agent1", ("agent2",), "Can you do slot 2?"),
        ("agent2", ("agent1",), "Yes, slot 2."),
    ]
    rows = {r["agent"]: r for r in result.rows}
    assert [rows[a]["messages"] for a in range(3)] == [1, 2, 1]
    assert result.metrics["messages_total"] == 4
    assert result.metrics["messages_per_meeting"] == 1.0


def test_repair_loop_fixes_a_malformed_reply(
    game: Game,
) -> None:
    _, trace, _ = game
    calls = model_calls(trace, "agent1")
    first, repaired = calls[0], calls[1]
    assert first.completion is not None and first.completion["text"] == MALFORMED
    repair = repaired.messages[-1]["content"]
    assert repair.startswith("I could not use that reply")
    assert "field `actions.0.dm.content`: Field required" in repair
    # The thread keeps the accepted reply, not the malformed one.
    later = calls[2].messages
    assert MALFORMED not in prompt_text(calls[2])
    assert FIXED_THINKING in later[2]["content"] and later[2]["role"] == "assistant"
    assert [m["role"] for m in later] == ["system", "user", "assistant", "user"]


def test_exhausted_retries_are_recorded_and_the_agent_passes(
    game: Game,
) -> None:
    _, trace, _ = game
    (invalid,) = env_events(trace, "invalid_response")
    assert invalid.seat == "agent2" and invalid.visible_to == ["agent2"] and invalid.round == 1
    assert invalid.data.phase == "CHEAP_TALK" and invalid.data.turn == 0
    assert invalid.data.attempts == 3
    problems = invalid.data.problems
    assert problems[0].startswith("your reply is not valid JSON: Expecting value at line 1")
    assert "field `actions`: Field required" in problems[1]
    assert "field `actions.0`" in problems[2] and "'shout'" in problems[2]
    turn_ends = [
        e for e in env_events(trace, "turn_end") if e.seat == "agent2" and e.round == 1
    ]
    assert turn_ends[0].data.tool_calls == []
    # The next step tells the agent its reply was unusable.
    nxt = model_calls(trace, "agent2")[3].messages[-1]["content"]
    assert nxt.startswith("Note: your previous reply could not be read (your JSON does not")
    assert "--- CHEAP_TALK, round 2, turn 2 ---" in nxt


def test_rejected_batch_gets_the_exact_conflict(
    game: Game,
) -> None:
    _, trace, _ = game
    (rejected,) = env_events(trace, "batch_rejected")
    assert rejected.seat == "agent1" and rejected.data.conflicts == [CONFLICT]
    retry = [
        c for c in model_calls(trace, "agent1")
        if "=== DECISION RETRY: attempt 2 of 4 ===" in c.messages[-1]["content"]
    ]
    assert len(retry) == 1 and f"- {CONFLICT}" in retry[0].messages[-1]["content"]


def test_call_counts_prompts_and_thinking(
    game: Game,
) -> None:
    _, trace, _ = game
    counts = {s: len(model_calls(trace, s)) for s in ("agent0", "agent1", "agent2")}
    assert counts == {"agent0": 3, "agent1": 9, "agent2": 6}
    prompts = env_events(trace, "agent_prompt")
    assert [e.seat for e in prompts] == ["agent0", "agent1", "agent2"]
    for event in prompts:
        seat_calls = model_calls(trace, event.seat)
        assert all(c.messages[0]["content"] == event.data.system_prompt for c in seat_calls)
        assert event.data.variant is None and event.data.adversarial is False
    # Thinking is logged for its own seat only and never reaches another agent's prompt.
    assert all(FIXED_THINKING not in prompt_text(c) for c in model_calls(trace, "agent0"))
    thinking = [e for e in env_events(trace, "turn_end") if e.data.thinking == FIXED_THINKING]
    assert len(thinking) == 1 and thinking[0].visible_to == ["agent1"]
    # Round 2 shows agent 1 the penalty of round 1 on the display scale (internal 2 -> 10).
    round2 = [
        c.messages[-1]["content"]
        for c in model_calls(trace, "agent1")
        if "ROUND 2 START" in c.messages[-1]["content"]
    ]
    assert "Penalty you have paid in earlier rounds: 10" in round2[0]


def test_each_thread_only_grows(game: Game) -> None:
    """A stable prefix: every request extends the previous accepted request of the seat."""
    _, trace, _ = game
    for seat in ("agent0", "agent1", "agent2"):
        requests = [
            c.messages for c in model_calls(trace, seat)
            if not c.messages[-1]["content"].startswith("I could not use that reply")
        ]
        for before, after in itertools.pairwise(requests):
            assert after[: len(before)] == before
