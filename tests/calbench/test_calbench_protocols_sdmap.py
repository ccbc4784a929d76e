"""SD-MAP (the CalBench paper §D.2) on games derived by hand.

Game A, 2 agents x 4 slots (the IMAP test's calendars):

    agent 0: [E1 cost 1, free, E2 cost 3 blocked, free]
    agent 1: [free, E3 cost 2, E4 cost 1, free]

M1 (order 0, 1) and M2 (order 1, 0), both with agents 0 and 1; agent 0 initiates.
Round 1: agent 0 walks its calendar in slot order; slot 0 holds a movable errand, so it
proposes 0; agent 1 (free there) replies PENDING in the same sweep; next sweep agent 0
confirms. DECISION: agent 0 moves E1 0 -> 1 (cost 1), both schedule M1 at 0.
Round 2: slot 0 now holds M1, which M2 may not bump (both have one other participant);
slot 1 holds E1, movable (slot 3 is free) -> propose 1. Agent 1 has E3 there, movable ->
PENDING; confirm. DECISION: agent 0 moves E1 1 -> 3 (cost 1), agent 1 moves E3 1 -> 3
(cost 2), both schedule M2 at 1.
Real costs (2, 2) vs oracle (1, 0): signed excess (1, 2), mean 1.5, fairness 0.5 each.
No cost or slot other than the proposed one is ever sent.

Game B, 3 agents x 4 slots, a bump and its repair:

    agent 0: [P9, E1 blocked, free, free]       P9 = prior meeting of agents 0 and 1
    agent 1: [P9, free, free, E2 cost 1]
    agent 2: [free, E3 blocked, E4 blocked, free]

M1 = (0, 1, 2), order (0, 1, 2); M2 = (0, 2), order (0, 2).
Round 1: agent 0 may bump P9 at slot 0 (Delta(P9) = 1 < Delta(M1) = 2) and proposes 0;
agent 1 replies PENDING (same bump), agent 2 PENDING (free); confirm. DECISION: agent 0
moves its P9 copy to its lowest free slot 2, agent 1 to 1 (cost 1 each); M1 at 0. P9 is
now inconsistent: one consistency violation, and M1 is unresolved (section 3: resolution
checks that prior meetings remain consistent), though its copies stay at slot 0.
Round 2: agent 0 sees its bump took place; it initiates P9's repair itself. It first
proposes M2 at slot 3 (0: M1 not bumpable, 1: blocked, 2: P9 not bumpable by M2) to agent
2, then `propose_reschedule` P9 -> 2 (where its own copy is) to agent 1, which activates
agent 1. Agent 2: slot 3 free -> PENDING. Agent 1 speaks in the same sweep: slot 2 is
free -> PENDING; it also asks P9's initiator (agent 0) for the repair. Next sweep agent 0
confirms M2 at 3 and the repair at 2. VOLUNTARY: agent 1 moves P9 1 -> 2 (cost 1).
DECISION: M2 at 3 for agents 0 and 2; P9 is consistent again, so M2 is resolved.
Only M2 counts as scheduled; its oracle is slot 3 at no cost: (0, 0, 0). SD-MAP pays
(1, 2, 0): signed excess (1, 2, 0), mean 1, fairness (0, 1, 1).
"""

from __future__ import annotations

from test_calbench_engine_support import (
    VARIED_DISPLAY,
    env_events,
    errand,
    payloads,
    prior,
    run_lineup,
    scenario,
)

from confide.envs.calbench.scenario import Scenario


def _game_a() -> Scenario:
    return scenario(
        [
            [errand(1, 1), None, errand(2, 3, blocked=True), None],
            [None, errand(3, 2), errand(4, 1), None],
        ],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (1, 0))],
        witness={1: 3, 2: 0},
        display=VARIED_DISPLAY,
    )


def _game_b() -> Scenario:
    return scenario(
        [
            [prior(9, (0, 1)), errand(1, blocked=True), None, None],
            [prior(9, (0, 1)), None, None, errand(2)],
            [None, errand(3, blocked=True), errand(4, blocked=True), None],
        ],
        [(1, (0, 1, 2), (0, 1, 2)), (2, (0, 2), (0, 2))],
    )


def _p(kind: str, **body: object) -> dict[str, object]:
    return {"protocol": "sdmap", "type": kind, **body}


def test_game_a_messages() -> None:
    _, trace = run_lineup(_game_a(), "sdmap")
    assert payloads(trace) == [
        ("agent0", ("agent1",), _p("propose", meeting_id=1, slot=0, to=[1])),
        ("agent1", ("agent0",), _p("reply", meeting_id=1, slot=0, status="PENDING", to=[0])),
        ("agent0", ("agent1",), _p("confirm", meeting_id=1, slot=0, to=[1])),
        ("agent0", ("agent1",), _p("propose", meeting_id=2, slot=1, to=[1])),
        ("agent1", ("agent0",), _p("reply", meeting_id=2, slot=1, status="PENDING", to=[0])),
        ("agent0", ("agent1",), _p("confirm", meeting_id=2, slot=1, to=[1])),
    ]
    sent = [m for _, _, m in payloads(trace)]
    assert all("cost" not in str(m) for m in sent)


def test_game_a_schedule_costs_and_fairness() -> None:
    result, trace = run_lineup(_game_a(), "sdmap")
    moves = [(e.seat, e.round, [m.model_dump() for m in e.data.moves])
             for e in env_events(trace, "batch_applied")]
    assert moves == [
        ("agent0", 0, [{"kind": "errand", "item_id": 1, "from_slot": 0, "to_slot": 1, "cost": 1}]),
        ("agent1", 0, []),
        ("agent1", 1, [{"kind": "errand", "item_id": 3, "from_slot": 1, "to_slot": 3, "cost": 2}]),
        ("agent0", 1, [{"kind": "errand", "item_id": 1, "from_slot": 1, "to_slot": 3, "cost": 1}]),
    ]
    rows = {r["seat"]: r for r in result.rows}
    assert [rows[s]["cost_real"] for s in ("agent0", "agent1")] == [2, 2]
    assert [rows[s]["cost_oracle"] for s in ("agent0", "agent1")] == [1, 0]
    assert [rows[s]["signed_excess"] for s in ("agent0", "agent1")] == [1, 2]
    assert [rows[s]["excess"] for s in ("agent0", "agent1")] == [1, 2]
    assert [rows[s]["fairness"] for s in ("agent0", "agent1")] == [0.5, 0.5]
    assert [rows[s]["messages"] for s in ("agent0", "agent1")] == [4, 2]
    # witness M1=3, M2=0 costs (1, 0) = oracle, so C_adj = excess / M
    assert [rows[s]["adj_cost"] for s in ("agent0", "agent1")] == [0.5, 1.0]
    assert result.metrics["excess_mean"] == 1.5


def test_game_b_bump_and_repair_messages() -> None:
    _, trace = run_lineup(_game_b(), "sdmap")
    assert payloads(trace) == [
        # round 1: propose slot 0, both PENDING (agent 1 tentatively bumps P9), confirm
        ("agent0", ("agent1",), _p("propose", meeting_id=1, slot=0, to=[1])),
        ("agent0", ("agent2",), _p("propose", meeting_id=1, slot=0, to=[2])),
        ("agent1", ("agent0",), _p("reply", meeting_id=1, slot=0, status="PENDING", to=[0])),
        ("agent2", ("agent0",), _p("reply", meeting_id=1, slot=0, status="PENDING", to=[0])),
        ("agent0", ("agent1",), _p("confirm", meeting_id=1, slot=0, to=[1])),
        ("agent0", ("agent2",), _p("confirm", meeting_id=1, slot=0, to=[2])),
        # round 2: M2 negotiation and P9 repair run side by side
        ("agent0", ("agent2",), _p("propose", meeting_id=2, slot=3, to=[2])),
        ("agent0", ("agent1",), _p("propose_reschedule", meeting_id=9, slot=2, to=[1])),
        ("agent2", ("agent0",), _p("reply", meeting_id=2, slot=3, status="PENDING", to=[0])),
        (
            "agent1",
            ("agent0",),
            _p("reschedule_reply", meeting_id=9, slot=2, status="PENDING", to=[0]),
        ),
        ("agent1", ("agent0",), _p("reschedule_request", meeting_id=9, to=[0])),
        ("agent0", ("agent2",), _p("confirm", meeting_id=2, slot=3, to=[2])),
        ("agent0", ("agent1",), _p("confirm_reschedule", meeting_id=9, slot=2, to=[1])),
    ]


def test_game_b_bump_schedule_costs_and_consistency() -> None:
    result, trace = run_lineup(_game_b(), "sdmap")
    moves = [
        (
            e.seat,
            e.round,
            e.data.phase,
            [(m.item_id, m.from_slot, m.to_slot) for m in e.data.moves],
        )
        for e in env_events(trace, "batch_applied")
    ]
    assert moves == [
        ("agent0", 0, "DECISION", [(9, 0, 2)]),
        ("agent1", 0, "DECISION", [(9, 0, 1)]),
        ("agent2", 0, "DECISION", []),
        ("agent1", 1, "VOLUNTARY", [(9, 1, 2)]),
        ("agent0", 1, "DECISION", []),
        ("agent2", 1, "DECISION", []),
    ]
    violations = env_events(trace, "consistency_violation")
    assert [(e.round, e.data.meeting_id, e.data.slots) for e in violations] == [
        (0, 9, {"0": 2, "1": 1})
    ]
    resolutions = env_events(trace, "resolution")
    assert [e.data.resolved for e in resolutions] == [False, True]
    assert resolutions[0].data.reason == "prior meeting(s) [9] inconsistent"
    rows = {r["seat"]: r for r in result.rows}
    assert [rows[f"agent{a}"]["cost_real"] for a in range(3)] == [1, 2, 0]
    assert [rows[f"agent{a}"]["cost_oracle"] for a in range(3)] == [0, 0, 0]
    assert [rows[f"agent{a}"]["messages"] for a in range(3)] == [8, 3, 2]
    assert [rows[f"agent{a}"]["messages_per_meeting"] for a in range(3)] == [8.0, 3.0, 2.0]
    assert [rows[f"agent{a}"]["fairness"] for a in range(3)] == [0.0, 1.0, 1.0]
    assert result.metrics["consistency_violations"] == 1
    assert result.metrics["meetings_scheduled"] == 1
    assert result.metrics["prior_meetings_moved"] == 2  # (agent0, P9) and (agent1, P9)


def test_unrepaired_bump_loses_the_bumped_meeting() -> None:
    """With no later round the bump is never repaired: P9 stays inconsistent, and M1, which
    failed its round because of it, does not count either."""
    sc = _game_b()
    sc = sc.model_copy(update={"meetings": sc.meetings[:1], "oracle": None})
    result, trace = run_lineup(sc, "sdmap")
    assert [e.data.resolved for e in env_events(trace, "resolution")] == [False]
    final = result.final_state["calendars"]
    assert final[0][2]["meeting_id"] == 9 and final[1][1]["meeting_id"] == 9
    assert result.metrics["meetings_scheduled"] == 0


def test_incognita_model_changes_the_bumping_rule() -> None:
    """With sigma(2) = 0, Delta(P9) = 1 is not below Delta(M1) = 1 + 0 for agents 0 and 1,
    so nobody bumps: agent 0 proposes slot 2 (slot 1 is blocked), where agent 2 has a
    blocked errand -> IMPOSSIBLE, then slot 3, where agent 1's errand is movable."""
    _, trace = run_lineup(_game_b(), "sdmap", options={"sd_model": {2: 0.0}})
    first_round = [p for _, _, p in payloads(trace) if p and p.get("meeting_id") == 1]
    proposed = [p["slot"] for p in first_round if p["type"] == "propose"]
    assert proposed == [2, 2, 3, 3]
    assert env_events(trace, "resolution")[0].data.slots == {"0": 3, "1": 3, "2": 3}
    # Round 2 (M2 = agents 0, 2): slot 0 holds P9, which M2 may not bump either; 1 is
    # blocked for agent 0, 2 for agent 2, 3 holds M1: no slot, so the meeting fails (D.2).
    # Each seat's empty batch is rejected (A.5 rule 6), and its retries take its second,
    # third, ... usable slot: agent 0 has only slot 2, agent 2 only slot 0, so nobody
    # places a copy.
    assert not env_events(trace, "consistency_violation")
    assert [e.data.resolved for e in env_events(trace, "resolution")] == [True, False]


def test_repair_over_each_condition() -> None:
    """All-agent groupchat carries the same exchange as broadcasts (so the bystander hears
    it); the participant groupchat cannot reach agent 1, who is not in M2, so the repair is
    abandoned and P9 stays inconsistent after both rounds, so both meetings fail their
    rounds (section 3)."""
    result, trace = run_lineup(_game_b(), "sdmap", condition="all-agent-groupchat")
    kinds = [p["type"] for _, _, p in payloads(trace) if p]
    assert kinds.count("confirm_reschedule") == 1
    assert all(set(to) == {"agent0", "agent1", "agent2"} - {s} for s, to, _ in payloads(trace))
    assert result.metrics["consistency_violations"] == 1
    result, trace = run_lineup(_game_b(), "sdmap", condition="participant-groupchat")
    kinds = [p["type"] for _, _, p in payloads(trace) if p]
    assert "propose_reschedule" not in kinds and kinds.count("confirm") == 2
    assert result.metrics["consistency_violations"] == 2
    assert result.metrics["meetings_scheduled"] == 0
