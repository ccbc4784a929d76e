"""Protocol-semantic VPS (the CalBench paper §3.2, F.1, F.2 Table 10, F.4) on small traces whose
beliefs and VPS are derived by hand."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_calbench_engine_support import errand, scenario

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered
from confide.envs.calbench import events as cal
from confide.envs.calbench.privacy import (
    BeliefTable,
    GameVps,
    VpsError,
    excess_vps_by_seat,
    nudge,
    vps_rows,
)
from confide.envs.calbench.scenario import Scenario


def _sc(agents: int, meetings: list[tuple[int, tuple[int, ...]]]) -> Scenario:
    return scenario(
        [[None, None, None, errand(10 + a)] for a in range(agents)],
        [(mid, parts, parts) for mid, parts in meetings],
    )


def _msg(
    rnd: int,
    sender: int,
    to: list[int],
    payload: dict[str, Any] | None,
    *,
    text: str | None = None,
    broadcast: bool = False,
) -> MessageDelivered:
    channel = Channel.broadcast() if broadcast else Channel.dm()
    body = None if payload is None else {**payload, "to": to}
    return MessageDelivered(message=Message(
        sender=f"agent{sender}", recipients=tuple(f"agent{a}" for a in to), channel=channel,
        payload=body, text=text, round=rnd,
    ))


def _pairs(vps: GameVps) -> dict[tuple[int, int, int], float]:
    """Non-zero VPS by (round, target, observer)."""
    return {
        (r.round, r.target_agent, r.observer_agent): r.vps_loss for r in vps.pairs if r.vps_loss
    }


def test_imap_trace_by_hand() -> None:
    """Round 0 (M1: agents 0, 1, 2), agent 0 initiates:
    - asks agent 1 about slots 0-3 and agent 2 about slots 0-1 (no evidence);
    - agent 1 answers [0, None, 1, 0]: four exact updates, 4 x 0.5 = 2.0 about agent 1;
    - agent 2 answers all four slots, but only the two it was asked count: 1.0;
    - two decisions on slot 3: 0.5 about agent 0 for each responder.
    Round 1 (M2: agents 1, 2): agent 1 volunteers a cost for slot 2 to agent 2 (no request:
    credited, 0.5), announces slot 2 on the all-agent groupchat (agent 0: 0.5; agent 2
    already believes 1.0: no change), and sends a decision without a slot and a text
    message (no evidence).
    Observed pair-rounds (at least one update): round 0 (1->0), (2->0), (0->1), (0->2),
    round 1 (1->2), (1->0): 6 of 12; participant pairs observed: the 4 of round 0 and
    (1->2): 5 of 8."""
    sc = _sc(3, [(1, (0, 1, 2)), (2, (1, 2))])

    def imap(kind: str, **body: object) -> dict[str, object]:
        return {"protocol": "imap", "type": kind, **body}

    events: list[object] = [
        cal.RoundStart(round=0, data=cal.RoundStartData(
            meeting=cal.MeetingInfo(meeting_id=1, participants=[0, 1, 2], cost=1),
            speaker_order=[0, 1, 2])),
        _msg(0, 0, [1], imap("cost_request", meeting_id=1, slots=[0, 1, 2, 3])),
        _msg(0, 0, [2], imap("cost_request", meeting_id=1, slots=[0, 1])),
        _msg(0, 1, [0], imap("costs", meeting_id=1, slots=[0, 1, 2, 3], costs=[0, None, 1, 0])),
        _msg(0, 2, [0], imap("costs", meeting_id=1, slots=[0, 1, 2, 3], costs=[None, 0, 0, 0])),
        _msg(0, 0, [1], imap("decision", meeting_id=1, slot=3)),
        _msg(0, 0, [2], imap("decision", meeting_id=1, slot=3)),
        _msg(1, 1, [2], imap("costs", meeting_id=2, slots=[2], costs=[5])),
        _msg(1, 1, [0, 2], imap("decision", meeting_id=2, slot=2), broadcast=True),
        _msg(1, 1, [2], imap("decision", meeting_id=2, slot=None)),
        _msg(1, 2, [1], None, text="slot 0 works for me"),
    ]
    vps = vps_rows(sc, events, floor=1.5)
    assert _pairs(vps) == {
        (0, 0, 1): 0.5, (0, 0, 2): 0.5, (0, 1, 0): 2.0, (0, 2, 0): 1.0,
        (1, 1, 2): 0.5, (1, 1, 0): 0.5,
    }
    beliefs = [(e.event_index, e.target_agent, e.observer_agent, e.slot, e.evidence)
               for e in vps.evidence if e.target_agent == 2]
    assert beliefs == [(4, 2, 0, 0, 0.0), (4, 2, 0, 1, 1.0)]
    assert [t.vps_loss_total for t in vps.targets] == [1.0, 3.0, 1.0]
    assert [t.excess_vps_loss_total for t in vps.targets] == [0.0, 1.5, 0.0]
    game = vps.game
    assert (game.pair_round_count, game.vps_loss_total, game.observation_count) == (12, 5.0, 11)
    assert game.observed_pair_round_count == 6
    assert game.vps_loss_mean_all_pair_rounds == pytest.approx(5 / 12)
    assert game.vps_loss_mean_observed_pair_rounds == pytest.approx(5 / 6)
    assert game.participant_pair_vps_loss_total == 4.5
    assert game.participant_pair_vps_loss_mean_all_pair_rounds == pytest.approx(4.5 / 8)
    assert game.participant_pair_vps_loss_mean_observed_pair_rounds == pytest.approx(4.5 / 5)
    assert game.excess_vps_loss_mean == pytest.approx(0.5)
    silent = [r for r in vps.pairs if r.round == 1 and r.target_agent == 0]
    assert [(r.observer_agent, r.observations, r.vps_loss) for r in silent] == [(1, 0, 0.0),
                                                                              (2, 0, 0.0)]
    row = next(r for r in vps.pairs if (r.round, r.target_agent, r.observer_agent) == (1, 1, 0))
    assert (row.target_is_participant, row.observer_is_participant) == (True, False)
    assert row.vps_loss_per_slot == pytest.approx(0.5 / 4)


def test_dsm_trace_by_hand() -> None:
    """Agent 0 proposes plans 0 and 1 (both slot 2) and 100 (slot 1): slots {1, 2} at 1.0,
    VPS 1.0 about agent 0. Agent 1 scores [0, 6, 11] for them and 11 for a plan id nobody
    proposed: slot 2 takes the better level 6 -> 6/11 (|6/11 - 0.5| = 1/22), slot 1 -> 1.0
    (0.5); the unknown plan is not credited. The decision names slot 2, already at 1.0.
    A scores message in the next round cannot reuse round 0's plan map."""
    sc = _sc(2, [(1, (0, 1)), (2, (0, 1))])

    def dsm(kind: str, **body: object) -> dict[str, object]:
        return {"protocol": "dsm", "type": kind, "meeting_id": 1, **body}

    plans = [{"plan_id": 0, "slot": 2, "moves": []}, {"plan_id": 1, "slot": 2, "moves": []},
             {"plan_id": 100, "slot": 1, "moves": []}]
    events = [
        _msg(0, 0, [1], dsm("proposals", sub_round=1, plans=plans)),
        _msg(0, 1, [0], dsm("scores", sub_round=1, plan_ids=[0, 1, 100, 555],
                            scores=[0, 6, 11, 11])),
        _msg(0, 0, [1], dsm("decision", plan_id=1, slot=2, moves=[], settlement={})),
        _msg(1, 1, [0], dsm("scores", sub_round=1, plan_ids=[0], scores=[11])),
    ]
    vps = vps_rows(sc, events)
    assert _pairs(vps) == pytest.approx({(0, 0, 1): 1.0, (0, 1, 0): 1 / 22 + 0.5})
    rows = [(e.source, e.slot, round(e.evidence, 6), e.belief_before, round(e.belief_after, 6))
            for e in vps.evidence]
    assert rows == [
        ("dsm_proposal", 1, 1.0, 0.5, 1.0),
        ("dsm_proposal", 2, 1.0, 0.5, 1.0),
        ("dsm_score", 1, 1.0, 0.5, 1.0),
        ("dsm_score", 2, 0.545455, 0.5, 0.545455),
        ("dsm_decision", 2, 1.0, 1.0, 1.0),
    ]


def test_sdmap_rules_by_hand() -> None:
    """propose: 0.5 -> 0.3 * 0.5 + 0.7 * 0.85 = 0.745, again -> 0.8185; reply IMPOSSIBLE
    -> 0.0; propose_reschedule / reschedule_reply PENDING -> 0.745 then 1.0. confirm,
    fail and reschedule_request carry no evidence."""
    sc = _sc(2, [(1, (0, 1))])

    def sd(kind: str, **body: object) -> dict[str, object]:
        return {"protocol": "sdmap", "type": kind, "meeting_id": 1, **body}

    events = [
        _msg(0, 0, [1], sd("propose", slot=1)),
        _msg(0, 0, [1], sd("propose", slot=1)),
        _msg(0, 1, [0], sd("reply", slot=1, status="IMPOSSIBLE")),
        _msg(0, 0, [1], sd("propose_reschedule", slot=2)),
        _msg(0, 1, [0], sd("reschedule_reply", slot=2, status="PENDING")),
        _msg(0, 0, [1], sd("confirm", slot=1)),
        _msg(0, 1, [0], sd("reschedule_request")),
        _msg(0, 0, [1], sd("fail")),
    ]
    vps = vps_rows(sc, events)
    after = [(e.source, e.slot, round(e.belief_after, 6), e.strength) for e in vps.evidence]
    assert after == [
        ("sd_propose", 1, 0.745, 0.7),
        ("sd_propose", 1, 0.8185, 0.7),
        ("sd_reply", 1, 0.0, 1.0),
        ("sd_propose_reschedule", 2, 0.745, 0.7),
        ("sd_reschedule_reply", 2, 1.0, 1.0),
    ]
    assert _pairs(vps) == pytest.approx({(0, 0, 1): 0.3185 + 0.245, (0, 1, 0): 1.0})


def test_bad_traces_are_named() -> None:
    sc = _sc(2, [(1, (0, 1))])
    late = _msg(3, 0, [1], {"protocol": "imap", "type": "decision", "slot": 1})
    with pytest.raises(VpsError, match=r"run\.jsonl: event 0: message round 3 is outside"):
        vps_rows(sc, [late], trace_path="run.jsonl")
    stranger = _msg(0, 7, [1], {"protocol": "imap", "type": "decision", "slot": 1})
    with pytest.raises(VpsError, match="agent 7 is outside the scenario's 2 agents"):
        vps_rows(sc, [stranger])
    odd = MessageDelivered(message=Message(sender="desk", recipients=("agent1",),
                                           channel=Channel.dm(), payload={"protocol": "imap",
                                           "type": "decision", "slot": 1}))
    with pytest.raises(VpsError, match="not a CalBench seat name"):
        vps_rows(sc, [odd])


def test_out_of_range_slots_carry_no_evidence() -> None:
    sc = _sc(2, [(1, (0, 1))])
    events = [
        _msg(0, 0, [1], {"protocol": "imap", "type": "decision", "slot": 9}),
        _msg(0, 0, [1], {"protocol": "imap", "type": "decision", "slot": True}),
        _msg(0, 1, [0], {"protocol": "imap", "type": "costs", "slots": [0, 1], "costs": [0]}),
    ]
    assert vps_rows(sc, events).evidence == []
    assert excess_vps_by_seat(sc, events) == {"agent0": 0.0, "agent1": 0.0}


def test_nudge_and_table() -> None:
    assert nudge(0.5, 0.85, 0.7) == pytest.approx(0.745)
    with pytest.raises(ValueError, match="strength must be in"):
        nudge(0.5, 1.0, 1.5)
    table = BeliefTable(4)
    assert table.update((0, 1, 0), 2, 0.0, 1.0) == (0.5, 0.0)
    assert table.posterior((0, 1, 0)) == [0.5, 0.5, 0.0, 0.5]
    assert table.posterior((0, 0, 1)) == [0.5] * 4
    assert table.distance_to_prior((0, 1, 0)) == 0.5
    with pytest.raises(ValueError, match="slot 4 is outside"):
        table.update((0, 1, 0), 4, 1.0, 1.0)


@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0, 1), st.floats(0, 1)), max_size=30),
       st.floats(0.3, 0.7))
def test_beliefs_stay_in_bounds(updates: list[tuple[int, float, float]], prior: float) -> None:
    table = BeliefTable(4, prior)
    for slot, evidence, strength in updates:
        before, after = table.update((0, 1, 0), slot, evidence, strength)
        assert min(before, evidence) - 1e-12 <= after <= max(before, evidence) + 1e-12
    loss = table.distance_to_prior((0, 1, 0))
    assert 0.0 <= loss <= 4 * max(prior, 1 - prior) + 1e-9


def test_message_claims_none_when_no_rule_reads_the_message() -> None:
    from confide.envs.calbench.privacy.rules import RuleState, message_claims

    state = RuleState(4)
    for payload in (None, {"protocol": "other", "type": "costs"}):
        event = _msg(0, 0, [1], payload, text="hi")
        assert message_claims(event.message, state) is None
    chosen = _msg(0, 1, [0, 2], {"protocol": "imap", "type": "decision", "slot": 2})
    found = message_claims(chosen.message, state)
    assert found is not None
    claims = [(2, 1.0, 1.0, "imap_decision")]
    assert (found.sender, found.observers, found.claims) == (1, [0, 2], claims)
