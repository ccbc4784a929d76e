"""SD-MAP under a short cheap-talk budget (the CalBench paper §D.2, A.3-A.5), derived by
hand. Game C, 3 agents x 5 slots, 2 sweeps per round:

    agent 0: [free, free, free, E1, free]
    agent 1: [free, E2, E6, free, E3 blocked]
    agent 2: [E4 blocked, free, E5, free, free]

M1 = (0, 1, 2), speaker order (1, 0, 2); M2 = (0, 1), order (1, 0). Agent 0 initiates both.

Round 1, sweep 0: agent 1 has nothing to read; agent 0 proposes slot 0 (free); agent 2,
later in the order, answers in the same sweep: IMPOSSIBLE (blocked errand). Sweep 1:
agent 1 answers slot 0: PENDING, which holds slot 0 for M1; agent 0 moves on to slot 1
(free) and agent 2 answers PENDING (holding slot 1). The budget ends before any confirm;
agent 1 never read the slot-1 proposal.
DECISION: nobody has an agreed slot, so each first submits no schedule (D.2); A.5 rule 6
rejects that, and on retry k each takes the k-th (from 0) slot it could use without moving
a meeting, skipping slots it holds: agent 1 (holds 0) [1, 2, 3] -> 2, displacing E6 to
its lowest free slot 0 (cost 1); agent 0 (holds 1, its open proposal) [0, 2, 3, 4] -> 2;
agent 2 (holds 1) [2, 3, 4] -> 3. M1's copies sit at 2, 2, 3: a consistency violation,
M1 unresolved, the batches stand (section 3).
Round 2, sweep 0: agent 1 drains the round-1 proposal of slot 1 and answers it (PENDING:
E2 is movable; slot 1 is now held for M1 too). Agent 0 proposes M2 at slot 0. Sweep 1:
agent 1 still holds slot 0 for M1: IMPOSSIBLE; agent 0 skips slot 1 (held for M1) and 2
(M1: Delta 2 is not below M2's 1) and proposes 3 (E1 movable). The budget ends.
DECISION: agent 1 (holds 0, 1) can use only slot 3, so no retry has a slot: 4 empty
batches, none valid; agent 0 (holds 1 and 3) [0, 4] -> 4. M2 unresolved.
The published engine plays this game message for message and schedules the same copies
(bench/calbench_peer_parity.py plays it on whole suites).

Game D, 3 agents x 4 free slots, 2 sweeps: a late confirm. M1 = (0, 1, 2), order (1, 0, 2);
M2 = (1, 2), order (1, 2).
Round 1, sweep 0: agent 0 proposes slot 0, agent 2 answers PENDING. Sweep 1: agent 1
answers PENDING (holding 0); agent 0 confirms 0 to both; agent 2 reads it in the same
sweep, agent 1, who already spoke, never does this round. DECISION: agent 1 has no agreed
slot: empty batch rejected, retry 1 takes its usable unheld slots [1, 2, 3] at index 1:
slot 2; agents 0 and 2 schedule 0. M1 unresolved.
Round 2, sweep 0: agent 1 drains the late confirm of M1, which ends its hold on slot 0,
then initiates M2 at slot 0 (free again for it); agent 2 holds M1 there (not bumpable):
IMPOSSIBLE. Sweep 1: agent 1 proposes 1; agent 2 PENDING. The budget ends. DECISION:
both have empty batches rejected; retry 1: agent 1 (holds 1) [0, 3] -> 3, agent 2 (holds
1) [2, 3] -> 3: M2 agrees at 3 and is resolved. (The published client takes the late
confirm's slot 0 as M2's agreed slot for agent 1, which D.2 rules out: a confirm agrees
the slot of the meeting it names.)
"""

from __future__ import annotations

from test_calbench_engine_support import env_events, errand, messages, run_lineup, scenario

from confide.envs.calbench.scenario import Scenario

NO_SCHEDULE = ["Batch must contain exactly 1 schedule action, found 0"]


def _game_c(turns: int = 2) -> Scenario:
    sc = scenario(
        [
            [None, None, None, errand(1), None],
            [None, errand(2), errand(6), None, errand(3, blocked=True)],
            [errand(4, blocked=True), None, errand(5), None, None],
        ],
        [(1, (0, 1, 2), (1, 0, 2)), (2, (0, 1), (1, 0))],
    )
    return sc.model_copy(update={"max_turns_per_round": turns})


Sent = tuple[int, str, tuple[str, ...], dict[str, object]]


def _m(rnd: int, sender: int, to: int, kind: str, mid: int, slot: int, status: str = "") -> Sent:
    """One delivered message: (round, sender, recipients, payload)."""
    body: dict[str, object] = {"protocol": "sdmap", "type": kind, "meeting_id": mid, "slot": slot}
    if status:
        body["status"] = status
    body["to"] = [to]
    return rnd, f"agent{sender}", (f"agent{to}",), body


def test_cut_negotiation_messages() -> None:
    _, trace = run_lineup(_game_c(), "sdmap")
    sent = [(m.round, m.sender, m.recipients, m.payload) for m in messages(trace)]
    assert sent == [
        _m(0, 0, 1, "propose", 1, 0),
        _m(0, 0, 2, "propose", 1, 0),
        _m(0, 2, 0, "reply", 1, 0, "IMPOSSIBLE"),
        _m(0, 1, 0, "reply", 1, 0, "PENDING"),
        _m(0, 0, 1, "propose", 1, 1),
        _m(0, 0, 2, "propose", 1, 1),
        _m(0, 2, 0, "reply", 1, 1, "PENDING"),
        _m(1, 1, 0, "reply", 1, 1, "PENDING"),  # the late proposal, answered
        _m(1, 0, 1, "propose", 2, 0),
        _m(1, 1, 0, "reply", 2, 0, "IMPOSSIBLE"),  # slot 0 is still held for M1
        _m(1, 0, 1, "propose", 2, 3),  # 1 held for M1, 2 holds M1
    ]


def test_cut_negotiation_decisions() -> None:
    result, trace = run_lineup(_game_c(), "sdmap")
    batches = [
        (e.round, e.seat, e.name, e.data.attempt if e.name == "batch_rejected" else None)
        for e in env_events(trace)
        if e.name in ("batch_rejected", "batch_applied", "batch_failed")
    ]
    r, a = "batch_rejected", "batch_applied"
    assert batches == [
        (0, "agent1", r, 1), (0, "agent0", r, 1), (0, "agent2", r, 1),
        (0, "agent1", a, None), (0, "agent0", a, None), (0, "agent2", a, None),
        (1, "agent1", r, 1), (1, "agent1", r, 2), (1, "agent1", r, 3), (1, "agent1", r, 4),
        (1, "agent1", "batch_failed", None),
        (1, "agent0", r, 1), (1, "agent0", a, None),
    ]
    assert all(e.data.conflicts == NO_SCHEDULE for e in env_events(trace, "batch_rejected"))
    applied = [
        (e.round, e.seat, [(m.item_id, m.from_slot, m.to_slot) for m in e.data.moves])
        for e in env_events(trace, "batch_applied")
    ]
    assert applied == [(0, "agent1", [(6, 2, 0)]), (0, "agent0", []), (0, "agent2", []),
                       (1, "agent0", [])]
    resolutions = env_events(trace, "resolution")
    assert [e.data.slots for e in resolutions] == [
        {"1": 2, "0": 2, "2": 3},
        {"1": None, "0": 4},
    ]
    assert [e.data.resolved for e in resolutions] == [False, False]
    assert result.metrics["meetings_scheduled"] == 0
    assert result.metrics["cost_real"] == 1


def test_full_budget_agrees_without_retries() -> None:
    """With 20 sweeps the same game needs no retry: M1 settles on slot 1 (free for agents
    0 and 2, E2 movable for agent 1), and M2 on slot 0."""
    _, trace = run_lineup(_game_c(20), "sdmap")
    assert not env_events(trace, "batch_rejected")
    resolutions = env_events(trace, "resolution")
    assert [e.data.slots for e in resolutions] == [{"1": 1, "0": 1, "2": 1}, {"1": 0, "0": 0}]


def test_late_confirm_ends_holds_and_agrees_nothing() -> None:
    sc = scenario(
        [[None] * 4, [None] * 4, [None] * 4],
        [(1, (0, 1, 2), (1, 0, 2)), (2, (1, 2), (1, 2))],
    ).model_copy(update={"max_turns_per_round": 2})
    _, trace = run_lineup(sc, "sdmap")
    sent = [(m.round, m.sender, m.recipients, m.payload) for m in messages(trace)]
    assert sent == [
        _m(0, 0, 1, "propose", 1, 0),
        _m(0, 0, 2, "propose", 1, 0),
        _m(0, 2, 0, "reply", 1, 0, "PENDING"),
        _m(0, 1, 0, "reply", 1, 0, "PENDING"),
        _m(0, 0, 1, "confirm", 1, 0),
        _m(0, 0, 2, "confirm", 1, 0),
        _m(1, 1, 2, "propose", 2, 0),  # slot 0 no longer held: the late confirm ended it
        _m(1, 2, 1, "reply", 2, 0, "IMPOSSIBLE"),
        _m(1, 1, 2, "propose", 2, 1),
        _m(1, 2, 1, "reply", 2, 1, "PENDING"),
    ]
    resolutions = env_events(trace, "resolution")
    assert [e.data.slots for e in resolutions] == [{"1": 2, "0": 0, "2": 0}, {"1": 3, "2": 3}]
    assert [e.data.resolved for e in resolutions] == [False, True]
    rejected = [(e.round, e.seat) for e in env_events(trace, "batch_rejected")]
    assert rejected == [(0, "agent1"), (1, "agent1"), (1, "agent2")]
