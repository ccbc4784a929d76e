"""The Table 10 belief rules and the F.1 update (the CalBench paper §F.1, F.2, F.4) at their
edges: which slots, levels, addressees and payloads count as evidence, and what the belief
table refuses. Every expected value is derived by hand: an exact update (alpha 1) sets the
belief to its evidence, so its VPS is |e - 0.5|."""

from __future__ import annotations

from typing import Any

import pytest
from test_calbench_vps_rules import _msg, _sc

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered
from confide.envs.calbench.privacy import BeliefTable, RuleState, Update, message_updates, nudge
from confide.envs.calbench.privacy.rules import message_claims


def _claims(*events: MessageDelivered, slots: int = 4) -> list[Any]:
    """The claims of the last message after the earlier ones filled the rule state."""
    state = RuleState(slots)
    found = None
    for event in events:
        found = message_claims(event.message, state)
    assert found is not None
    return found.claims


def _raw(rnd: int, sender: int, to: list[int], payload: dict[str, Any]) -> MessageDelivered:
    """A message to `to` with the payload as given (`_msg` adds `to` to it; without one,
    everyone who saw it is addressed)."""
    return MessageDelivered(
        message=Message(
            sender=f"agent{sender}",
            recipients=tuple(f"agent{a}" for a in to),
            channel=Channel.dm(),
            payload=payload,
            round=rnd,
        )
    )


def _dsm(kind: str, **body: object) -> dict[str, Any]:
    return {"protocol": "dsm", "type": kind, "meeting_id": 1, **body}


def _imap(kind: str, **body: object) -> dict[str, Any]:
    return {"protocol": "imap", "type": kind, "meeting_id": 1, **body}


PLANS = [{"plan_id": 0, "slot": 0}, {"plan_id": 1, "slot": 1}, {"plan_id": 2, "slot": 2}]


def test_dsm_score_levels_by_hand() -> None:
    """D = 12 levels: level s of a plan is evidence s / 11 for its slot, 0 for s <= 0,
    capped at 1 (slot 0: level 1 -> 1/11; slot 1: level -2 -> 0; slot 2: level 40 -> 1)."""
    proposals = _msg(0, 0, [1], _dsm("proposals", plans=PLANS))
    scores = _msg(0, 1, [0], _dsm("scores", plan_ids=[0, 1, 2], scores=[1, -2, 40]))
    assert _claims(proposals, scores) == [
        (0, 1 / 11, 1.0, "dsm_score"),
        (1, 0.0, 1.0, "dsm_score"),
        (2, 1.0, 1.0, "dsm_score"),
    ]


def test_dsm_scores_read_only_plans_proposed_to_the_scorer() -> None:
    """Agent 0 proposed its plans to agent 1 only; agent 2's scores for the same plan ids
    name no slot it was shown, and a plan id or level that is not an integer is skipped."""
    proposals = _msg(0, 0, [1], _dsm("proposals", plans=PLANS))
    stranger = _msg(0, 2, [0], _dsm("scores", plan_ids=[0, 1], scores=[11, 11]))
    assert _claims(proposals, stranger) == []
    odd = _msg(0, 1, [0], _dsm("scores", plan_ids=[0, "1", 2, 1], scores=[11, 11, 5.0, 6]))
    assert _claims(proposals, odd) == [(0, 1.0, 1.0, "dsm_score"), (1, 6 / 11, 1.0, "dsm_score")]
    bare = _raw(0, 1, [0], _dsm("scores", plan_ids=[1], scores=[11]))  # no `to`: its viewers
    assert _claims(proposals, bare) == [(1, 1.0, 1.0, "dsm_score")]
    unpaired = _msg(0, 1, [0], _dsm("scores", plan_ids=[0, 1], scores=11))
    assert _claims(proposals, unpaired) == []


def test_dsm_proposals_skip_malformed_plans() -> None:
    """Only plans with an integer id and an in-range integer slot are evidence (and enter
    the plan map the scores are read through)."""
    plans = [
        {"plan_id": 0, "slot": 3},
        {"plan_id": "1", "slot": 1},
        {"plan_id": 2, "slot": 4},
        {"plan_id": 3, "slot": -1},
        [4, 2],
        {"plan_id": 5, "slot": 0},
    ]
    proposals = _msg(0, 0, [1, 2], _dsm("proposals", plans=plans))
    assert _claims(proposals) == [(0, 1.0, 1.0, "dsm_proposal"), (3, 1.0, 1.0, "dsm_proposal")]
    assert _claims(_msg(0, 0, [1], _dsm("proposals", plans={"plan_id": 0}))) == []
    # both viewers were shown the map: either one's scores are read through it
    for viewer in (1, 2):
        scores = _msg(0, viewer, [0], _dsm("scores", plan_ids=[5, 1], scores=[11, 11]))
        assert _claims(proposals, scores) == [(0, 1.0, 1.0, "dsm_score")]


@pytest.mark.parametrize("slot", [-1, 4, True, 1.0, "1", None])
def test_a_slot_outside_the_calendar_is_no_evidence(slot: Any) -> None:
    """Slots are the integers 0..3 of a 4-slot calendar; 0 and 3 count, nothing else."""
    assert _claims(_msg(0, 0, [1], _imap("decision", slot=slot))) == []
    assert _claims(_msg(0, 0, [1], _imap("decision", slot=0))) == [(0, 1.0, 1.0, "imap_decision")]
    assert _claims(_msg(0, 0, [1], _imap("decision", slot=3))) == [(3, 1.0, 1.0, "imap_decision")]
    sd = {"protocol": "sdmap", "type": "propose", "meeting_id": 1, "slot": slot}
    assert _claims(_msg(0, 0, [1], sd)) == []
    reply = {**sd, "type": "reply", "status": "PENDING"}
    assert _claims(_msg(0, 0, [1], reply)) == []


def test_imap_costs_count_on_the_slots_any_addressee_asked() -> None:
    """Agents 0 and 2 both get agent 1's costs reply (its `to`); only agent 0 asked, about
    slots 0 and 1: the reply counts there only (slot 1 at cost None: free is 0 evidence),
    and the same reply before any request counts on every slot it reports."""
    request = _msg(0, 0, [1], _imap("cost_request", slots=[0, 1, 9]))
    reply = _msg(0, 1, [0, 2], _imap("costs", slots=[0, 1, 2, 3], costs=[0, None, 2, 1]))
    assert _claims(request, reply) == [(0, 1.0, 1.0, "imap_cost"), (1, 0.0, 1.0, "imap_cost")]
    assert [c[0] for c in _claims(reply)] == [0, 1, 2, 3]
    # the request only bounds replies to its asker within its round
    later = _msg(1, 1, [0], _imap("costs", slots=[2], costs=[1]))
    assert _claims(request, later) == [(2, 1.0, 1.0, "imap_cost")]
    bare = _raw(0, 1, [0], _imap("costs", slots=[0, 3], costs=[0, 0]))  # no `to`: its viewers
    assert _claims(request, bare) == [(0, 1.0, 1.0, "imap_cost")]
    assert _claims(request, _msg(0, 1, [0], _imap("costs", slots=2, costs=[1]))) == []
    assert _claims(_msg(0, 0, [1], _imap("cost_request", slots=[0]))) == []  # says nothing


def test_a_costs_reply_nobody_asked_for_is_not_bounded() -> None:
    request = _msg(0, 0, [1], _imap("cost_request", slots=[0]))
    reply = _msg(0, 1, [0], _imap("costs", slots=[0, 1], costs=[1, 1]))
    assert [c[0] for c in _claims(request, reply)] == [0]
    elsewhere = _msg(0, 2, [0], _imap("costs", slots=[0, 1], costs=[1, 1]))
    assert [c[0] for c in _claims(request, elsewhere)] == [0, 1]


def test_message_updates_fan_out_to_every_observer() -> None:
    post = _msg(0, 2, [0, 1], _imap("decision", slot=1))
    assert message_updates(post.message, RuleState(4)) == [
        Update(2, 0, 1, 1.0, 1.0, "imap_decision"),
        Update(2, 1, 1, 1.0, 1.0, "imap_decision"),
    ]
    assert message_updates(_msg(0, 2, [0], None, text="hi").message, RuleState(4)) == []
    alone = _raw(0, 2, [], _imap("decision", slot=1))
    assert message_claims(alone.message, RuleState(4)) is None  # nobody saw it


def test_an_unread_message_moves_no_belief_in_a_game() -> None:
    from confide.envs.calbench.privacy import vps_rows

    sc = _sc(2, [(1, (0, 1))])
    events = [_raw(0, 0, [], _imap("decision", slot=1)), _msg(0, 0, [1], _imap("decide"))]
    assert vps_rows(sc, events).game.vps_loss_total == 0.0


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((-0.1, 0.5, 0.5), "belief"),
        ((1.1, 0.5, 0.5), "belief"),
        ((0.5, -0.1, 0.5), "evidence"),
        ((0.5, 1.1, 0.5), "evidence"),
        ((0.5, 0.5, -0.1), "strength"),
        ((0.5, 0.5, 1.1), "strength"),
        ((0.0, 1.0, 1.1), "strength"),  # the edges 0 and 1 are in range
        ((1.0, 0.0, -0.1), "strength"),
        ((0.0, -0.1, 1.0), "evidence"),
    ],
)
def test_nudge_names_the_value_out_of_range(args: tuple[float, float, float], name: str) -> None:
    with pytest.raises(ValueError, match=rf"nudge: {name} must be in \[0, 1\], got"):
        nudge(*args)


def test_nudge_at_the_edges_by_hand() -> None:
    assert nudge(0.0, 1.0, 1.0) == 1.0
    assert nudge(1.0, 0.0, 0.0) == 1.0
    assert nudge(0.0, 1.0, 0.25) == 0.25
    assert nudge(1.0, 0.0, 0.25) == 0.75


def test_the_belief_table_refuses_what_no_calendar_has() -> None:
    with pytest.raises(ValueError, match="num_slots must be >= 1, got 0"):
        BeliefTable(0)
    with pytest.raises(ValueError, match=r"prior must be in \[0, 1\], got 1.5"):
        BeliefTable(4, 1.5)
    with pytest.raises(ValueError, match=r"prior must be in \[0, 1\], got -0.5"):
        BeliefTable(4, -0.5)
    for prior in (0.0, 1.0):
        assert BeliefTable(1, prior).posterior((0, 1, 0)) == [prior]
    table = BeliefTable(4)
    for slot in (-1, 4, 5):
        with pytest.raises(ValueError, match=rf"slot {slot} is outside \[0, 4\)"):
            table.apply((0, 1, 0), [(slot, 1.0, 1.0, "s")])
        with pytest.raises(ValueError, match=rf"slot {slot} is outside \[0, 4\)"):
            table.update((0, 1, 0), slot, 1.0, 1.0)


def test_the_belief_table_by_hand() -> None:
    """Two claims on one key (slot 0 -> 1.0, slot 3 -> 0.0), then an update of slot 3 to
    0.5 at strength 0.5 (0.25): two keys, three observations on the first; the posterior
    is a copy; the distance is 0.5 + 0.25."""
    table = BeliefTable(4)
    moved = table.apply((0, 1, 0), [(0, 1.0, 1.0, "a"), (3, 0.0, 1.0, "b")])
    assert moved == [(0.5, 1.0), (0.5, 0.0)]
    assert table.update((0, 1, 0), 3, 0.5, 0.5) == (0.0, 0.25)
    assert table.update((1, 0, 1), 1, 0.5, 1.0) == (0.5, 0.5)
    assert table.observations((0, 1, 0)) == 3
    assert table.observations((1, 0, 1)) == 1
    assert table.observations((0, 0, 1)) == 0
    assert table.keys() == [(0, 1, 0), (1, 0, 1)]
    assert table.distance_to_prior((0, 1, 0)) == 0.75
    assert table.distance_to_prior((1, 0, 1)) == 0.0
    assert table.distance_to_prior((0, 0, 1)) == 0.0
    posterior = table.posterior((0, 1, 0))
    posterior[0] = 0.0
    assert table.posterior((0, 1, 0)) == [1.0, 0.5, 0.5, 0.25]
    assert table.apply((2, 0, 1), []) == [] and table.observations((2, 0, 1)) == 0
    low = BeliefTable(2, 0.2)
    assert low.apply((0, 1, 0), [(1, 1.0, 1.0, "a")]) == [(0.2, 1.0)]
    assert low.posterior((0, 1, 0)) == [0.2, 1.0]
    assert low.distance_to_prior((0, 1, 0)) == pytest.approx(0.8)


def test_a_posted_reply_answers_only_its_addressees() -> None:
    """Agent 1 posts to agents 0 and 2 (both see it) a reply addressed `to` agent 0 only:
    costs are bounded by agent 0's request (slot 0), not agent 2's (slot 3), and scores
    are read through agent 0's plans (plan 7 -> slot 1), not agent 2's (plan 7 -> slot 2).
    A `to` that is not a list of agent ids falls back to everyone who saw it."""
    ask0 = _msg(0, 0, [1], _imap("cost_request", slots=[0]))
    ask2 = _msg(0, 2, [1], _imap("cost_request", slots=[3]))
    costs = _imap("costs", slots=[0, 3], costs=[0, 0])
    post = _raw(0, 1, [0, 2], {**costs, "to": [0]})
    assert _claims(ask0, ask2, post) == [(0, 1.0, 1.0, "imap_cost")]
    named = _raw(0, 1, [0, 2], {**costs, "to": ["agent0"]})
    assert [c[0] for c in _claims(ask0, ask2, named)] == [0, 3]
    shown0 = _msg(0, 0, [1], _dsm("proposals", plans=[{"plan_id": 7, "slot": 1}]))
    shown2 = _msg(0, 2, [1], _dsm("proposals", plans=[{"plan_id": 7, "slot": 2}]))
    scores = _raw(0, 1, [0, 2], _dsm("scores", plan_ids=[7], scores=[11], to=[0]))
    assert _claims(shown0, shown2, scores) == [(1, 1.0, 1.0, "dsm_score")]


def test_a_request_naming_no_slot_bounds_its_reply_to_none() -> None:
    """A cost request is a request even when it names no valid slot: the reply to it is
    credited on the slots asked, here none."""
    for slots in (3, [9, "1"]):
        request = _msg(0, 0, [1], _imap("cost_request", slots=slots))
        reply = _msg(0, 1, [0], _imap("costs", slots=[0, 1], costs=[0, 0]))
        assert _claims(request, reply) == []


def test_messages_read_back_from_json_give_the_same_evidence() -> None:
    """Scoring reads messages from trace files: parsed back from JSON, an SDMAP reply
    IMPOSSIBLE is still evidence 0 (the slot is not usable), and every rule gives what it
    gave the live messages."""
    sd = {"protocol": "sdmap", "meeting_id": 1}
    live = [
        _msg(0, 0, [1], {**sd, "type": "propose", "slot": 1}),
        _msg(0, 1, [0], {**sd, "type": "reply", "slot": 1, "status": "IMPOSSIBLE"}),
        _msg(0, 1, [0], {**sd, "type": "reschedule_reply", "slot": 2, "status": "IMPOSSIBLE"}),
        _msg(0, 0, [1], _dsm("proposals", plans=PLANS)),
        _msg(0, 1, [0], _dsm("scores", plan_ids=[0, 1], scores=[3, 11])),
        _msg(0, 0, [1], _imap("cost_request", slots=[2, 3])),
        _msg(0, 1, [0], _imap("costs", slots=[2, 3], costs=[None, 4])),
    ]
    read = [MessageDelivered.model_validate_json(e.model_dump_json()) for e in live]
    state = RuleState(4)
    claims = [message_claims(e.message, state) for e in read]
    assert [c.claims for c in claims if c is not None][1:3] == [
        [(1, 0.0, 1.0, "sd_reply")],
        [(2, 0.0, 1.0, "sd_reschedule_reply")],
    ]
    from confide.envs.calbench.privacy import vps_rows

    sc = _sc(2, [(1, (0, 1))])
    assert vps_rows(sc, read) == vps_rows(sc, live)


def test_only_an_impossible_reply_says_the_slot_is_unusable() -> None:
    """Table 10: e = 0 if the status is IMPOSSIBLE, else 1, whatever else it says."""
    for kind in ("reply", "reschedule_reply"):
        for status in ("PENDING", "ACCEPTED", "impossible", None):
            payload = {"protocol": "sdmap", "type": kind, "meeting_id": 1, "slot": 2}
            reply = _msg(0, 1, [0], {**payload, "status": status})
            assert _claims(reply) == [(2, 1.0, 1.0, f"sd_{kind}")]


def test_unpaired_lists_are_no_evidence_whichever_is_longer() -> None:
    """Parallel payload lists of different lengths pair nothing (and raise nothing)."""
    proposals = _msg(0, 0, [1], _dsm("proposals", plans=PLANS))
    for ids, levels in (([0, 1], [11]), ([0], [11, 11])):
        scores = _msg(0, 1, [0], _dsm("scores", plan_ids=ids, scores=levels))
        assert _claims(proposals, scores) == []
    for slots, costs in (([0, 1], [0]), ([0], [0, 0])):
        assert _claims(_msg(0, 1, [0], _imap("costs", slots=slots, costs=costs))) == []


def test_long_paired_lists_are_read() -> None:
    """A costs reply of 300 entries (slots 299..0 of which a 4-slot calendar has 0..3)
    counts on its in-range slots; lists that long still pair."""
    slots = list(range(299, -1, -1))  # the out-of-range entries first
    reply = _msg(0, 1, [0], _imap("costs", slots=slots, costs=[0] * 300))
    assert [c[0] for c in _claims(reply)] == [0, 1, 2, 3]
