"""G.5 own-slot disclosure labels on hand-written messages (the CalBench paper §G.5, Table 13):
slot mention + first person + cue, per sentence; negated availability is a constraint;
numeric costs tracked separately; per-seat and per-participant rates."""

from __future__ import annotations

import pytest
from test_calbench_audit_semantic import labelled, trace_of

from confide.envs.calbench.audits.common import game_record
from confide.envs.calbench.audits.own_slot import (
    disclosure_summary,
    game_disclosures,
    message_labels,
)

P, A, C, N = "own_slot_proposal", "own_slot_availability", "own_cost_constraint", "numeric_cost"

CASES: list[tuple[str, set[str]]] = [
    ("I propose slot 4 for the meeting.", {P}),
    # slot and first person in different sentences: missed, as the paper's conservative
    # rules miss elliptical statements (G.5 recall)
    ("How about slot 7? It works for me.", set()),
    ("I'm free at slot 3 and slot 9.", {A}),
    ("Slot 5 is open on my calendar.", {A}),
    ("I'd like slot 2, I'm free then.", {P, A}),
    ("Slot 6 is difficult for me.", {C}),
    ("Slot 1 is blocked on my side, I can't move it.", {C}),
    ("I'm not free at slot 8.", {C}),
    ("I can move my errand out of slot 10 cheaply.", {C}),
    ("Moving it would cost me 100, so slot 4 is expensive for me.", {C, N}),
    ("My errand there costs 10.", {N}),
    ("Slot 4 works for agent 2.", set()),  # no first person
    ("I am flexible this week.", set()),  # no slot
    ("Let's go with slot 3; I'm free there.", set()),
    ("Let's go with slot 3, I'm free there.", {P, A}),
    ("Let me suggest slot 12, my calendar is open.", {P, A}),
    ("Agent 1 said slot 3 is busy. I agree.", set()),  # cue and first person apart
]


@pytest.mark.parametrize(("text", "labels"), CASES)
def test_hand_written_messages(text: str, labels: set[str]) -> None:
    found = {k for k, v in message_labels(text).items() if v}
    assert found == labels


def test_rows_and_rates() -> None:
    sc = labelled()
    trace = trace_of(sc, [
        (0, [1], "I propose slot 2."),
        (0, [1], "Slot 1 is difficult for me."),
        (1, [0], "I'm free at slot 2."),
        (2, [1], "ok"),
        (0, [1], None),
    ])
    game = game_record(trace, {sc.task_id: sc})
    rows = game_disclosures(game)
    assert [(r.message_id, r.sender_agent, r.own_slot_proposal, r.own_slot_availability,
             r.own_cost_constraint) for r in rows] == [
        (0, 0, True, False, False), (1, 0, False, False, True), (2, 1, False, True, False),
        (3, 2, False, False, False),
    ]
    summary = {(r.participant, r.cost_setting): r for r in disclosure_summary([game.tally()], rows)}
    model = summary["mock/m", "uniform"]  # agents 0 and 2: three text messages
    assert (model.seat_games, model.text_messages) == (2, 3)
    assert model.proposal_message_rate == pytest.approx(1 / 3)
    assert model.cost_constraint_message_rate == pytest.approx(1 / 3)
    assert model.proposal_seat_game_rate == 0.5  # agent 0 of the two seats
    pooled = summary["all", "all"]
    assert (pooled.seat_games, pooled.text_messages) == (3, 4)
    assert pooled.availability_seat_game_rate == pytest.approx(1 / 3)
    assert summary["imap", "all"].availability_message_rate == 1.0
