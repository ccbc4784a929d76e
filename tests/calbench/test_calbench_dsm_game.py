"""DSM-Welfare and DSM-Private (the CalBench paper §D.3, Table 9) on small games derived by hand:
messages, schedule, costs, point settlement and protocol-semantic VPS (F.2).

2-agent, 4-slot game (uniform costs), both meetings with agents (0, 1), speaker order
(0, 1), agent 0 initiates:

    agent 0: [free, E1, E2 blocked, free]
    agent 1: [E3, free, free, E4 blocked]

DSM-Welfare, round 1 (M1). Agent 0's plans, best first: slot 0 (free, level 11, plan 0),
slot 3 (free, 11, plan 300), slot 1 (E1 movable, 10, plan 100). Its free fraction is
2/4, one responder: p = 0.5; U(1) = 0.5, U(2) = 1.25, U(3) = 1.598 -> L = 3. Agent 1
scores [10 (E3), 0 (blocked), 11 (free)]. Plans 0 and 100 both lose 1 level in total; the
lower slot wins: slot 0. Agent 1 paid C(10) + C(11) = 1 + 0 = 1 and gets R = (11 - 10) +
(min(2, 3) - 1) = 2: points 99 / 101. DECISION: agent 0 schedules at 0; agent 1 moves E3
0 -> 1 and schedules at 0.
Round 2 (M2). Agent 0 now holds [M1, E1, E2 blocked, free]: plans slot 3 (11, plan 300),
slot 0 by moving M1 0 -> 3 (10, plan 0; a displaced meeting lands on a free slot only, so
no chain goes to slot 1), slot 1 (10, plan 100); equal levels go by slot. p = 1/4: U =
-0.25, 0.29, 0.70 -> L = 3. Agent 1 ([M1, E3, free, E4 blocked]) scores [0 (blocked), 0
(M1's destination 3 is not free on its calendar), 10]. Best: plan 100 (loss 2), slot 1.
Agent 1 paid C(10) = 1, gets (11 - 10) + (min(1, 3) - 1) = 1: points 99 / 101. DECISION:
agent 0 moves E1 1 -> 3, agent 1 moves E3 1 -> 2; both schedule at 1. Costs paid: (1, 2).
VPS per round: agent 1 learns agent 0's proposed slots (rounds: {0, 1, 3}, {0, 1, 3}: 1.5
each); agent 0 learns agent 1's levels: round 1 slots 0 -> 10/11, 1 -> 1, 3 -> 0: 0.409 +
0.5 + 0.5; round 2 slots 0 -> 0, 1 -> 10/11, 3 -> 0: 0.5 + 0.409 + 0.5. Decisions name a
slot already at 1: no change.

DSM-Private. L = 1 every time (theta = 10). Round 1: offers slot 0, agent 1 scores 10,
agreed; agent 1 pays 1 and gets (11 - 10) + 0 = 1: points stay 100. Round 2: offers slot 3
only, agent 1 scores 0; one more offer set has negative utility, so the initiator stops
with no fully-feasible offer and announces its best-ranked one, plan 300 at slot 3. Agent
0 commits it (slot 3 is free: cost 0); agent 1 cannot (E4 is blocked), so it schedules M2
at the first slot it can take itself ([M1, E3, free, E4 blocked]: slot 1, moving E3 to
slot 2, cost 1). M2 fails (slots 3 and 1), both batches stand, one consistency violation
(A.5); costs paid (0, 1 + 1).
VPS: 0.5 + 0.409 in round 1, 0.5 + 0.5 in round 2 (the decision names slot 3, already at
1).
"""

from __future__ import annotations

import asyncio

import pytest
from test_calbench_engine_support import env_events, errand, payloads, prior, run_players, scenario

from confide.core.trace import TraceRecorder, canonical_events
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.engine import Game, GameConfig
from confide.envs.calbench.participants.dsm import (
    DSM_PRIVATE,
    DSM_WELFARE,
    DsmParticipant,
    DsmPreset,
)
from confide.envs.calbench.privacy import vps_rows
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import load_suite

W = 10 / 11


def _two_agents() -> Scenario:
    return scenario(
        [
            [None, errand(1), errand(2, blocked=True), None],
            [errand(3), None, None, errand(4, blocked=True)],
        ],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (0, 1))],
    )


def _seats(preset: DsmPreset, n: int) -> dict[int, DsmParticipant]:
    return {a: DsmParticipant(seat_of(a), preset) for a in range(n)}


def _dsm(kind: str, **body: object) -> dict[str, object]:
    return {"protocol": "dsm", "type": kind, **body}


def _plan(plan_id: int, slot: int, moves: list[dict[str, int]] | None = None) -> dict[str, object]:
    return {"plan_id": plan_id, "slot": slot, "moves": moves or []}


def _applied(trace: TraceRecorder) -> list[tuple[int | None, str, list[dict[str, object]], int]]:
    return [
        (e.round, str(e.seat), e.data.actions, e.data.cost)
        for e in env_events(trace, "batch_applied")
    ]


def _settle(charge: int, reward: int) -> dict[str, dict[str, int]]:
    return {"1": {"charge": charge, "reward": reward}}


def test_welfare_two_agents_by_hand() -> None:
    seats = _seats(DSM_WELFARE, 2)
    outcome, report, trace = run_players(_two_agents(), seats)
    a0, a1 = ("agent0",), ("agent1",)
    assert payloads(trace) == [
        ("agent0", a1, _dsm("proposals", meeting_id=1, sub_round=1,
                            plans=[_plan(0, 0), _plan(300, 3), _plan(100, 1)], to=[1])),
        ("agent1", a0, _dsm("scores", meeting_id=1, sub_round=1, plan_ids=[0, 300, 100],
                            scores=[10, 0, 11], to=[0])),
        ("agent0", a1, _dsm("decision", meeting_id=1, plan_id=0, slot=0, moves=[],
                            settlement=_settle(1, 2), to=[1])),
        ("agent0", a1, _dsm("proposals", meeting_id=2, sub_round=1, plans=[
            _plan(300, 3),
            _plan(0, 0, [{"meeting_id": 1, "from_slot": 0, "to_slot": 3}]),
            _plan(100, 1),
        ], to=[1])),
        ("agent1", a0, _dsm("scores", meeting_id=2, sub_round=1, plan_ids=[300, 0, 100],
                            scores=[0, 0, 10], to=[0])),
        ("agent0", a1, _dsm("decision", meeting_id=2, plan_id=100, slot=1, moves=[],
                            settlement=_settle(1, 1), to=[1])),
    ]
    assert outcome.resolved == {1: True, 2: True}
    assert [cal.slot_of_meeting(1) for cal in outcome.calendars] == [0, 0]
    assert [cal.slot_of_meeting(2) for cal in outcome.calendars] == [1, 1]
    moves = [(r, s, [a["type"] for a in acts], c) for r, s, acts, c in _applied(trace)]
    assert moves == [
        (0, "agent0", ["schedule"], 0),
        (0, "agent1", ["reschedule", "schedule"], 1),
        (1, "agent0", ["reschedule", "schedule"], 1),
        (1, "agent1", ["reschedule", "schedule"], 1),
    ]
    assert [r["cost_real"] for r in report.rows] == [1, 2]
    assert (seats[0].points, seats[1].points) == (99, 101)
    thoughts = [e.data.thinking for e in env_events(trace, "turn_end") if e.data.thinking]
    assert thoughts[0] == (
        "dsm-welfare M1: slot 0 (plan 0) after 1 sub-round(s); points 100 -> 99 "
        "(collected 1, paid 2)"
    )

    vps = vps_rows(_two_agents(), trace.events, floor=2.0)
    by_pair = {(r.round, r.target_agent, r.observer_agent): r.vps_loss for r in vps.pairs}
    assert by_pair[(0, 0, 1)] == pytest.approx(1.5)
    assert by_pair[(0, 1, 0)] == pytest.approx(abs(W - 0.5) + 1.0)
    assert by_pair[(1, 0, 1)] == pytest.approx(1.5)
    assert by_pair[(1, 1, 0)] == pytest.approx(abs(W - 0.5) + 1.0)
    totals = [t.vps_loss_total for t in vps.targets]
    assert totals == pytest.approx([3.0, 2 * (W - 0.5) + 2.0], abs=1e-6)
    excess = [t.excess_vps_loss_total for t in vps.targets]
    assert excess == pytest.approx([1.0, 2 * (W - 0.5)], abs=1e-6)
    sources = [(e.round, e.source, e.slot) for e in vps.evidence if e.target_agent == 0]
    assert sources == [
        (0, "dsm_proposal", 0), (0, "dsm_proposal", 1), (0, "dsm_proposal", 3),
        (0, "dsm_decision", 0),
        (1, "dsm_proposal", 0), (1, "dsm_proposal", 1), (1, "dsm_proposal", 3),
        (1, "dsm_decision", 1),
    ]


def test_private_two_agents_by_hand() -> None:
    seats = _seats(DSM_PRIVATE, 2)
    outcome, report, trace = run_players(_two_agents(), seats)
    a0, a1 = ("agent0",), ("agent1",)
    assert payloads(trace) == [
        ("agent0", a1, _dsm("proposals", meeting_id=1, sub_round=1, plans=[_plan(0, 0)], to=[1])),
        ("agent1", a0, _dsm("scores", meeting_id=1, sub_round=1, plan_ids=[0], scores=[10],
                            to=[0])),
        ("agent0", a1, _dsm("decision", meeting_id=1, plan_id=0, slot=0, moves=[],
                            settlement=_settle(1, 1), to=[1])),
        ("agent0", a1, _dsm("proposals", meeting_id=2, sub_round=1, plans=[_plan(300, 3)],
                            to=[1])),
        ("agent1", a0, _dsm("scores", meeting_id=2, sub_round=1, plan_ids=[300], scores=[0],
                            to=[0])),
        ("agent0", a1, _dsm("decision", meeting_id=2, plan_id=300, slot=3, moves=[],
                            settlement=_settle(0, 0), to=[1])),
    ]
    assert outcome.resolved == {1: True, 2: False}
    assert [r["cost_real"] for r in report.rows] == [0, 2]
    assert [r["scheduled"] for r in report.rows] == [1, 1]
    assert env_events(trace, "batch_failed") == []
    assert [cal.slot_of_meeting(2) for cal in outcome.calendars] == [3, 1]
    assert [e.data.meeting_id for e in env_events(trace, "consistency_violation")] == [2]
    assert (seats[0].points, seats[1].points) == (100, 100)
    vps = vps_rows(_two_agents(), trace.events)
    assert [t.vps_loss_total for t in vps.targets] == pytest.approx([1.0, abs(W - 0.5) + 0.5])
    assert [t.excess_vps_loss_total for t in vps.targets] == [0.0, 0.0]


def _displacement(*, errand_at_landing: bool = False) -> Scenario:
    """M1 (agents 0, 1) fits only where agent 0 holds prior meeting M9 with agent 2.

        agent 0: [M9, E1 blocked, free, E2 blocked]
        agent 1: [free, free, E3 blocked, E4]
        agent 2: [M9, E5, free, E6 blocked]   (or E5 at slot 2 with `errand_at_landing`)
    """
    e5, landing = errand(5), None
    if errand_at_landing:
        e5, landing = None, errand(5)
    return scenario(
        [
            [prior(9, (0, 2)), errand(1, blocked=True), None, errand(2, blocked=True)],
            [None, None, errand(3, blocked=True), errand(4)],
            [prior(9, (0, 2)), e5, landing, errand(6, blocked=True)],
        ],
        [(1, (0, 1), (0, 1))],
    )


def test_welfare_cross_meeting_displacement_by_hand() -> None:
    """Agent 0 offers slot 2 (free, plan 200) and slot 0 after moving M9 0 -> 2 (level 10,
    plan 0; the only chain: slots 1 and 3 are blocked); p = 1/4, L = 2. D.3: one proposals
    DM per scorer with both offers. Agent 1 sees both plans without the move (it does not
    attend M9) and scores [0, 11]; agent 2, a non-participant scoring as an additional
    responder, sees the move in plan 0 and scores [11, 10] (plan 200 asks nothing of it;
    plan 0 moves M9, shown cost 1, to its free slot 2). Plan 0 wins. Agent 2 moves
    its copy in VOLUNTARY, agent 0 in its DECISION batch; M9 stays consistent at slot 2.
    Settlement: agent 2 pays C(11) + C(10) = 0 + 1 and gets (11 - 10) + (min(A=2, L=2) - 1)
    = 2; agent 1 pays 0 and gets (11 - 11) + (min(1, 2) - 1) = 0; agent 0 collects 1 and
    pays 2. VPS (p0 = 1/2, every update exact): agent 0 told agent 1 and agent 2 slots 2
    and 0 (4 x 0.5); agent 1 told agent 0 slot 2 level 0 and slot 0 level 11 (2 x 0.5);
    agent 2 told agent 0 slot 2 level 11 (0.5) and slot 0 level 10 (10/11 - 0.5)."""
    seats = _seats(DSM_WELFARE, 3)
    outcome, _, trace = run_players(_displacement(), seats)
    move = {"meeting_id": 9, "from_slot": 0, "to_slot": 2}
    assert payloads(trace) == [
        ("agent0", ("agent1",), _dsm("proposals", meeting_id=1, sub_round=1,
                                     plans=[_plan(200, 2), _plan(0, 0)], to=[1])),
        ("agent0", ("agent2",), _dsm("proposals", meeting_id=1, sub_round=1,
                                     plans=[_plan(200, 2), _plan(0, 0, [move])], to=[2])),
        ("agent1", ("agent0",), _dsm("scores", meeting_id=1, sub_round=1, plan_ids=[200, 0],
                                     scores=[0, 11], to=[0])),
        ("agent2", ("agent0",), _dsm("scores", meeting_id=1, sub_round=1, plan_ids=[200, 0],
                                     scores=[11, 10], to=[0])),
        ("agent0", ("agent1",), _dsm("decision", meeting_id=1, plan_id=0, slot=0, moves=[],
                                     settlement={"1": {"charge": 0, "reward": 0}}, to=[1])),
        ("agent0", ("agent2",), _dsm("decision", meeting_id=1, plan_id=0, slot=None,
                                     moves=[move], settlement={"2": {"charge": 1, "reward": 2}},
                                     to=[2])),
    ]
    assert outcome.resolved == {1: True}
    assert [cal.slot_of_meeting(9) for cal in outcome.calendars] == [2, None, 2]
    assert [cal.slot_of_meeting(1) for cal in outcome.calendars] == [0, 0, None]
    applied = [(s, d.phase, d.cost) for s, d in
               ((e.seat, e.data) for e in env_events(trace, "batch_applied"))]
    assert applied == [("agent2", "VOLUNTARY", 1), ("agent0", "DECISION", 1),
                       ("agent1", "DECISION", 0)]
    assert not env_events(trace, "consistency_violation")
    assert [s.points for s in seats.values()] == [99, 100, 101]
    vps = vps_rows(_displacement(), trace.events)
    totals = [t.vps_loss_total for t in vps.targets]
    assert totals == pytest.approx([2.0, 1.0, 0.5 + W - 0.5])


def test_welfare_displacement_needs_a_free_landing_on_every_holder() -> None:
    """The same game with agent 2's E5 on slot 2, where the plan puts M9. A.5 rule 5 lets
    a batch move M9 there only if slot 2 is free or freed by the same batch, and the
    published engine's scorers, like ours, score such a move infeasible (the paper does not
    say whether a holder may evict an errand for a displaced meeting). So agent 2 scores
    [11, 0]: no offer suits everyone, both plans are tried (DSM-Welfare searches
    exhaustively, D.3), and the initiator announces its best-ranked offer that moves no
    meeting, slot 2, which agent 1 cannot take (E3 blocked): it schedules at its first
    usable slot 0 and M1 fails; M9 does not move."""
    seats = _seats(DSM_WELFARE, 3)
    outcome, _, trace = run_players(_displacement(errand_at_landing=True), seats)
    sent = payloads(trace)
    assert sent[3] == ("agent2", ("agent0",), _dsm("scores", meeting_id=1, sub_round=1,
                                                   plan_ids=[200, 0], scores=[11, 0], to=[0]))
    assert [p[2]["plan_id"] for p in sent[4:] if p[2] is not None] == [200, None]
    assert outcome.resolved == {1: False}
    assert [cal.slot_of_meeting(9) for cal in outcome.calendars] == [0, None, 0]
    assert [cal.slot_of_meeting(1) for cal in outcome.calendars] == [2, 0, None]


def test_groupchat_conditions_share_one_message_per_step() -> None:
    """On the participant groupchat the displacement plan needs agent 2, whom the channel
    cannot reach, so only slot 2 is offered, agent 1 cannot take it and M1 fails; on the
    all-agent groupchat one post to both scorers carries both plans."""
    outcome, _, trace = run_players(_displacement(), _seats(DSM_WELFARE, 3),
                                    GameConfig(condition="participant-groupchat"))
    first = payloads(trace)[0]
    assert first == ("agent0", ("agent1",), _dsm("proposals", meeting_id=1, sub_round=1,
                                                 plans=[_plan(200, 2)], to=[1]))
    assert outcome.resolved == {1: False}
    outcome, _, trace = run_players(_displacement(), _seats(DSM_WELFARE, 3),
                                    GameConfig(condition="all-agent-groupchat"))
    first = payloads(trace)[0]
    assert first[1] == ("agent1", "agent2")
    assert first[2] is not None
    assert [(p["plan_id"], p["slot"]) for p in first[2]["plans"]] == [(200, 2), (0, 0)]
    assert outcome.resolved == {1: True}


def _canonical_trace(preset: DsmPreset, task: Scenario) -> list[object]:
    trace = TraceRecorder(task.task_id)
    seats = {seat_of(a): DsmParticipant(seat_of(a), preset) for a in range(task.num_agents)}
    asyncio.run(Game(task, seats, trace).play())
    return canonical_events(trace.events)


def test_deterministic_on_canonical_tasks() -> None:
    tasks = load_suite("canonical")[::30]
    for preset in (DSM_WELFARE, DSM_PRIVATE):
        for task in tasks:
            assert _canonical_trace(preset, task) == _canonical_trace(preset, task)


def _sixteen_slots() -> Scenario:
    """Agent 0: slots 0-12 free, E13-E15 at 13-15; agent 1: blocked errands at 0-11,
    free at 12-15."""
    return scenario(
        [
            [None] * 13 + [errand(s) for s in (13, 14, 15)],
            [errand(s, blocked=True) for s in range(12)] + [None] * 4,
        ],
        [(1, (0, 1), (0, 1))],
    )


def test_welfare_searches_a_second_batch() -> None:
    """p = 13/16. Sub-round 1: U grows with L up to L_max, so slots 0-11 are offered; all
    are blocked for agent 1. Sub-round 2 over the rest (values [1, 10/11 x 3]): U(1..4) =
    1.44, 1.85, 1.92, 1.93 -> L = 4; agent 1 is free on all; slot 12 loses nothing. Agent 1
    paid nothing (zeros and 11s cost 0) and gets (11 - 11) + (min(4, 4) - 1) = 3.
    DSM-Private offers slot 0 only, learns it is blocked, and stops: M1 fails."""
    seats = _seats(DSM_WELFARE, 2)
    outcome, _, trace = run_players(_sixteen_slots(), seats)
    sent = [(p["type"], p.get("sub_round"), [e["slot"] for e in p.get("plans", [])])
            for _, _, p in payloads(trace) if p is not None]
    assert sent == [
        ("proposals", 1, list(range(12))),
        ("scores", 1, []),
        ("proposals", 2, [12, 13, 14, 15]),
        ("scores", 2, []),
        ("decision", None, []),
    ]
    scores = [p["scores"] for _, _, p in payloads(trace) if p and p["type"] == "scores"]
    assert scores == [[0] * 12, [11] * 4]
    assert outcome.resolved == {1: True}
    assert [cal.slot_of_meeting(1) for cal in outcome.calendars] == [12, 12]
    assert (seats[0].points, seats[1].points) == (97, 103)
    vps = vps_rows(_sixteen_slots(), trace.events)
    assert [t.vps_loss_total for t in vps.targets] == pytest.approx([8.0, 8.0])
    assert [t.excess_vps_loss_total for t in vps.targets] == pytest.approx([3.0, 3.0])

    outcome, _, trace = run_players(_sixteen_slots(), _seats(DSM_PRIVATE, 2))
    assert [(p["type"], p.get("plans")) for _, _, p in payloads(trace) if p][:2] == [
        ("proposals", [_plan(0, 0)]), ("scores", None),
    ]
    assert outcome.resolved == {1: False}
