"""IMAP (the CalBench paper §D.1) on a 2-agent, 4-slot game derived by hand.

Calendars (varied costs, shown to agents as 1/10/100):

    agent 0: [E1 cost 1, free, E2 cost 3 blocked, free]
    agent 1: [free, E3 cost 2, E4 cost 1, free]

Meetings M1 then M2, both with agents 0 and 1; speaker orders (0, 1) and (1, 0); agent 0
(lowest id) initiates both.

Round 1. Agent 0 asks for costs; agent 1 (speaking next in the same sweep) answers
[0, 10, 1, 0]; agent 0's own vector is [1, 0, None (blocked), 0]; totals [1, 10, -, 0] ->
slot 3; sweep 2 is silent, so the round has 3 sweeps. Nobody moves anything.
Round 2. Agent 1 speaks first and has nothing; agent 0 asks; next sweep agent 1 answers
[0, 10, 1, None (M1)]; agent 0 (own [1 (E1 can go to free slot 1), 0, None, None]) picks
slot 0 (total 1 < 10) and decides. DECISION: agent 0 moves E1 0 -> 1 (cost 1) and
schedules M2 at 0; agent 1 schedules at 0.

Oracle: slots cost 0:1, 1:2, 2:blocked, 3:0, so {M1, M2} -> {0, 3} for 1, the
lexicographically smallest being M1=0, M2=3; per agent (1, 0). IMAP pays (1, 0): no excess,
no unfairness. Messages: agent 0 sends 2 requests + 2 decisions, agent 1 two cost vectors.
"""

from __future__ import annotations

from test_calbench_engine_support import (
    VARIED_DISPLAY,
    env_events,
    errand,
    payloads,
    run_lineup,
    scenario,
)

from confide.envs.calbench.participants.imap import choose_slot, insertion_costs
from confide.envs.calbench.scenario import Scenario


def _game() -> Scenario:
    return scenario(
        [
            [errand(1, 1), None, errand(2, 3, blocked=True), None],
            [None, errand(3, 2), errand(4, 1), None],
        ],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (1, 0))],
        witness={1: 3, 2: 0},
        display=VARIED_DISPLAY,
    )


def test_messages_are_the_hand_derived_ones() -> None:
    _, trace = run_lineup(_game(), "imap")
    msgs = payloads(trace)

    def p(kind: str, **body: object) -> dict[str, object]:
        return {"protocol": "imap", "type": kind, **body}

    assert msgs == [
        ("agent0", ("agent1",), p("cost_request", meeting_id=1, slots=[0, 1, 2, 3], to=[1])),
        (
            "agent1",
            ("agent0",),
            p("costs", meeting_id=1, slots=[0, 1, 2, 3], costs=[0, 10, 1, 0], to=[0]),
        ),
        ("agent0", ("agent1",), p("decision", meeting_id=1, slot=3, to=[1])),
        ("agent0", ("agent1",), p("cost_request", meeting_id=2, slots=[0, 1, 2, 3], to=[1])),
        (
            "agent1",
            ("agent0",),
            p("costs", meeting_id=2, slots=[0, 1, 2, 3], costs=[0, 10, 1, None], to=[0]),
        ),
        ("agent0", ("agent1",), p("decision", meeting_id=2, slot=0, to=[1])),
    ]
    assert [e.data.turns for e in env_events(trace, "resolution")] == [3, 3]


def test_schedule_and_costs_are_the_hand_derived_ones() -> None:
    result, trace = run_lineup(_game(), "imap")
    applied = [
        (e.seat, e.data.phase, e.data.actions) for e in env_events(trace, "batch_applied")
    ]
    assert applied == [
        ("agent0", "DECISION", [{"type": "schedule", "meeting_id": 1, "slot": 3}]),
        ("agent1", "DECISION", [{"type": "schedule", "meeting_id": 1, "slot": 3}]),
        ("agent1", "DECISION", [{"type": "schedule", "meeting_id": 2, "slot": 0}]),
        (
            "agent0",
            "DECISION",
            [
                {
                    "type": "reschedule",
                    "item_id": 1,
                    "from_slot": 0,
                    "to_slot": 1,
                    "justification": "make room for meeting M2",
                },
                {"type": "schedule", "meeting_id": 2, "slot": 0},
            ],
        ),
    ]
    final = result.final_state["calendars"]
    assert [None if s is None else s.get("meeting_id", s.get("errand_id")) for s in final[0]] == [
        2,
        1,
        2,
        1,
    ]
    rows = {r["seat"]: r for r in result.rows}
    assert (rows["agent0"]["cost_real"], rows["agent1"]["cost_real"]) == (1, 0)
    assert (rows["agent0"]["cost_oracle"], rows["agent1"]["cost_oracle"]) == (1, 0)
    assert rows["agent0"]["excess"] == rows["agent1"]["excess"] == 0
    assert rows["agent0"]["fairness"] == rows["agent1"]["fairness"] == 0
    assert (rows["agent0"]["messages"], rows["agent1"]["messages"]) == (4, 2)
    assert (rows["agent0"]["messages_per_meeting"], rows["agent1"]["messages_per_meeting"]) == (
        2,
        1,
    )
    assert rows["agent0"]["success"] == rows["agent1"]["success"] == 1.0
    # witness M1=3, M2=0 costs agent 0 one (E1) like the oracle: no miss penalty either way
    assert rows["agent0"]["adj_cost"] == 0.0
    assert result.metrics["messages_per_meeting"] == 6 / 4
    # the displayed penalty after round 2 is E1's display cost
    assert env_events(trace, "batch_applied")[-1].data.display_cost == 1


def test_three_participants_send_exactly_two_messages_per_participant_meeting() -> None:
    """D.1 footprint: 2 per responder + 1 decision per responder = 6 for 3 participants."""
    sc = scenario(
        [[None, errand(1)], [errand(2), None], [None, None]],
        [(1, (0, 1, 2), (2, 1, 0))],
    )
    result, trace = run_lineup(sc, "imap")
    assert len(payloads(trace)) == 6
    assert result.metrics["messages_per_meeting"] == 2.0
    assert sum(r["messages_per_meeting"] for r in result.rows) / 3 == 2.0


def test_cost_vector_and_choice_rules() -> None:
    view_game = _game()
    from confide.envs.calbench.engine.views import ViewBuilder

    views = ViewBuilder(view_game, ("dm",))
    cals = view_game.to_calendars()
    assert insertion_costs(views.calendar(cals[0])) == [1, 0, None, 0]
    assert insertion_costs(views.calendar(cals[1])) == [0, 10, 1, 0]
    assert choose_slot([[1, 0, None, 0], [0, 10, 1, 0]]) == 3
    assert choose_slot([[0, 5], [5, 0]]) == 0  # tie -> lowest index
    assert choose_slot([[None, 1], [1, None]]) is None


def test_a_turn_budget_that_cuts_the_exchange_falls_back_to_the_first_usable_slot() -> None:
    """With one sweep the initiator never reads the cost vectors, so nobody has an agreed
    slot; A.3 still asks each participant for a schedule call, so each schedules at the
    first slot it can take itself. Round 1: agent 0 [E1, -, E2 blocked, -] -> slot 0,
    moving E1 to slot 1 (cost 1); agent 1 [-, E3, E4, -] -> slot 0 (free): both at 0, so
    M1 is resolved. Round 2: agent 0 [M1, E1, E2 blocked, -] -> slot 1, E1 to 3 (cost 1);
    agent 1 [M1, E3, E4, -] -> slot 1, E3 to 3 (cost 2): resolved again."""
    result, trace = run_lineup(_game(), "imap", options={"max_turns_per_round": 1})
    assert env_events(trace, "batch_rejected") == []
    slots = [e.data.slots for e in env_events(trace, "resolution")]
    assert slots == [{"0": 0, "1": 0}, {"1": 1, "0": 1}]
    assert result.metrics["meetings_scheduled"] == 2
    assert [r["cost_real"] for r in result.rows] == [2, 2]


def test_participant_groupchat_carries_one_post_per_broadcast() -> None:
    """Under the participant groupchat the request and the decision are one post each and
    the cost vectors are posts addressed to the initiator: 1 + 2 + 1 for 3 participants."""
    sc = scenario(
        [[None, errand(1)], [errand(2), None], [None, None]],
        [(1, (0, 1, 2), (0, 1, 2))],
    )
    result, trace = run_lineup(sc, "imap", condition="participant-groupchat")
    kinds = [(s, p["type"], p["to"]) for s, _, p in payloads(trace) if p]
    assert kinds == [
        ("agent0", "cost_request", [1, 2]),
        ("agent1", "costs", [0]),
        ("agent2", "costs", [0]),
        ("agent0", "decision", [1, 2]),
    ]
    assert result.metrics["messages_per_meeting"] == 4 / 3
    assert result.metrics["meetings_scheduled"] == 1
