"""Calendar model: A.5 validation rules (one failing case per rule, exact strings),
transactional apply, rendering, label visibility, cross-calendar consistency."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confide.envs.calbench.world import (
    Action,
    BatchRejected,
    Calendar,
    Errand,
    Meeting,
    MeetingItem,
    Reschedule,
    Schedule,
    Slot,
    apply_batch,
    find_inconsistencies,
    label_visible,
    validate_batch,
)

M5 = Meeting(5, (0, 1), cost=1, speaker_order=(0, 1))
CAL = Calendar(
    0,
    (
        None,
        Errand(7, 2, label_id="e7"),
        Errand(9, 3, blocked=True),
        MeetingItem(2, 1, (0, 1), label_id="m2"),
        None,
        Errand(11, 1),
    ),
)


def conflicts(
    actions: list[Action], *, meeting: Meeting = M5, require: bool = True
) -> tuple[str, ...]:
    return validate_batch(CAL, actions, meeting=meeting, require_schedule=require)


def test_rule1_slot_bounds() -> None:
    assert conflicts([Reschedule(7, 1, 6), Schedule(5, 0)]) == (
        "Action 1 (reschedule): to_slot=6 is not a slot index in [0, 6)",
    )
    assert conflicts([Schedule(5, -1)]) == (
        "Action 1 (schedule): slot=-1 is not a slot index in [0, 6)",
    )
    raw: Action = Schedule(5, "3")  # type: ignore[arg-type]  # parsed model output
    assert conflicts([raw]) == ("Action 1 (schedule): slot='3' is not a slot index in [0, 6)",)
    assert conflicts([Schedule(5, True)]) == (
        "Action 1 (schedule): slot=True is not a slot index in [0, 6)",
    )


def test_rule2_item_identity() -> None:
    assert conflicts([Reschedule(8, 1, 4), Schedule(5, 0)]) == (
        "Action 1 (reschedule): item_id=8 does not match the item at slot 1 (errand #7)",
    )
    assert conflicts([Reschedule(3, 0, 4), Schedule(5, 0)]) == (
        "Action 1 (reschedule): from_slot 0 is free, there is no item 3 to move",
    )
    assert conflicts([Reschedule(7, 1, 0), Reschedule(7, 1, 4), Schedule(5, 1)]) == (
        "Action 2 (reschedule): from_slot 1 is already moved by action 1",
    )


def test_rule3_no_blocked_moves() -> None:
    assert conflicts([Reschedule(9, 2, 4), Schedule(5, 2)]) == (
        "Action 1 (reschedule): blocked errand #9 at slot 2 cannot be moved",
    )


def test_rule4_no_destination_conflicts() -> None:
    assert conflicts([Reschedule(7, 1, 4), Schedule(5, 4)]) == (
        "Action 2 (schedule): destination slot 4 is already targeted by action 1",
    )
    assert conflicts([Reschedule(7, 1, 0), Reschedule(11, 5, 0), Schedule(5, 1)]) == (
        "Action 2 (reschedule): destination slot 0 is already targeted by action 1",
    )


def test_rule5_freeness_after_batch() -> None:
    assert conflicts([Reschedule(7, 1, 5), Schedule(5, 1)]) == (
        "Action 1 (reschedule): to_slot 5 is occupied by errand #11 and no other action in the "
        "batch moves it away",
    )
    assert conflicts([Reschedule(7, 1, 1), Schedule(5, 0)]) == (
        "Action 1 (reschedule): to_slot 1 is occupied by errand #7 and no other action in the "
        "batch moves it away",
    )


def test_rule6_exactly_one_schedule() -> None:
    assert conflicts([]) == ("Batch must contain exactly 1 schedule action, found 0",)
    assert conflicts([Schedule(5, 0), Schedule(5, 4)]) == (
        "Batch must contain exactly 1 schedule action, found 2",
    )
    assert conflicts([Schedule(5, 0)], require=False) == (
        "Batch must contain no schedule action in this phase, found 1",
    )
    assert conflicts([Schedule(4, 0)]) == (
        "Action 1 (schedule): meeting_id=4 is not the meeting being scheduled (M5)",
    )
    again = Meeting(2, (0, 1), speaker_order=(0, 1))
    assert conflicts([Schedule(2, 0)], meeting=again) == (
        "Action 1 (schedule): meeting M2 is already on the calendar at slot 3",
    )


def test_rule7_schedule_slot_free() -> None:
    assert conflicts([Schedule(5, 1)]) == (
        "Action 1 (schedule): slot 1 is occupied by errand #7 and no action in the batch moves "
        "it away",
    )


def test_conflicts_are_listed_in_rule_order() -> None:
    got = conflicts([Reschedule(9, 2, 9), Reschedule(9, 2, 1), Schedule(5, 5)])
    assert got == (
        "Action 1 (reschedule): to_slot=9 is not a slot index in [0, 6)",
        "Action 2 (reschedule): blocked errand #9 at slot 2 cannot be moved",
        "Action 2 (reschedule): to_slot 1 is occupied by errand #7 and no other action in the "
        "batch moves it away",
        "Action 3 (schedule): slot 5 is occupied by errand #11 and no action in the batch moves "
        "it away",
    )


def test_apply_moves_and_schedules() -> None:
    result = apply_batch(CAL, [Reschedule(7, 1, 0, "free slot 1"), Schedule(5, 1)], meeting=M5)
    assert result.calendar.slots[0] == Errand(7, 2, label_id="e7")
    assert result.calendar.slots[1] == MeetingItem(5, 1, (0, 1))
    assert result.cost == 2
    assert result.moves == ((Errand(7, 2, label_id="e7"), 1, 0),)
    assert CAL.slots[1] == Errand(7, 2, label_id="e7")  # input untouched


def test_apply_swap_and_meeting_move() -> None:
    swap = apply_batch(CAL, [Reschedule(7, 1, 5), Reschedule(11, 5, 1), Schedule(5, 0)], meeting=M5)
    assert swap.calendar.slots[5] == CAL.slots[1] and swap.calendar.slots[1] == CAL.slots[5]
    assert swap.cost == 3
    bump = apply_batch(CAL, [Reschedule(2, 3, 4), Schedule(5, 3)], meeting=M5)
    assert bump.calendar.slots[4] == CAL.slots[3] and bump.cost == 1


def test_voluntary_batch_without_schedule() -> None:
    result = apply_batch(CAL, [Reschedule(2, 3, 0, "helping M5")], require_schedule=False)
    assert result.calendar.slots[0] == CAL.slots[3] and result.calendar.slots[3] is None


def test_apply_rejects_whole_batch() -> None:
    with pytest.raises(BatchRejected) as err:
        apply_batch(CAL, [Reschedule(7, 1, 0), Schedule(5, 2)], meeting=M5)
    assert err.value.conflicts == (
        "Action 2 (schedule): slot 2 is occupied by blocked errand #9 and no action in the batch "
        "moves it away",
    )
    assert str(err.value) == err.value.conflicts[0]


def test_decision_validation_needs_the_meeting() -> None:
    with pytest.raises(ValueError, match="needs the meeting"):
        validate_batch(CAL, [Schedule(5, 0)])


def test_render_shows_costs_labels_and_participants() -> None:
    text = CAL.render(cost_display={1: 1, 2: 10, 3: 100}, labels={"e7": "dentist", "m2": "review"})
    assert text.splitlines() == [
        "Slot 0: free",
        "Slot 1: errand #7 (cost 10) | note: dentist",
        "Slot 2: errand #9 (cost 100, blocked: cannot be moved)",
        "Slot 3: meeting M2 (cost 1) with agents [0, 1] | note: review",
        "Slot 4: free",
        "Slot 5: errand #11 (cost 1)",
    ]
    assert "cost 2" in CAL.render()


def test_label_visibility_rules() -> None:
    errand, meeting = Errand(1, 1), MeetingItem(2, 1, (0, 2))
    assert label_visible(0, 0, errand) and not label_visible(1, 0, errand)
    assert label_visible(2, 0, meeting) and not label_visible(1, 0, meeting)
    assert label_visible(1, 3, Meeting(4, (1, 3))) and not label_visible(0, 3, Meeting(4, (1, 3)))


def test_find_inconsistencies() -> None:
    a = Calendar(0, (MeetingItem(1, 1, (0, 1)), None))
    b_ok = Calendar(1, (MeetingItem(1, 1, (0, 1)), None))
    b_moved = Calendar(1, (None, MeetingItem(1, 1, (0, 1))))
    c = Calendar(2, (None, MeetingItem(1, 1, (0, 1))))
    assert find_inconsistencies([a, b_ok]) == ()
    assert find_inconsistencies([a, b_moved]) == (
        "Meeting M1 is at slot 0 for agent 0 but at slot 1 for agent 1",
    )
    assert find_inconsistencies([a, Calendar(1, (None, None))]) == (
        "Meeting M1 lists participants [0, 1] but is missing from the calendar of agent 1",
    )
    assert find_inconsistencies([a, b_ok, c]) == (
        "Meeting M1 is at slot 0 for agent 0 but at slot 1 for agent 2",
        "Meeting M1 is on the calendar of agent 2, who is not a participant",
    )
    twice = Calendar(0, (MeetingItem(1, 1, (0,)), MeetingItem(1, 1, (0,))))
    assert find_inconsistencies([twice]) == (
        "Meeting M1 appears twice on the calendar of agent 0 (slots 0 and 1)",
    )


# -- hypothesis: valid batches keep calendars consistent -------------------------------------


@st.composite
def calendars_and_batches(draw: st.DrawFn) -> tuple[Calendar, list[Action], Meeting, bool]:
    """A random calendar and batch; half of the batches are built to be valid."""
    n = draw(st.integers(1, 8))
    slots: list[Slot] = []
    for s in range(n):
        kind = draw(st.sampled_from(["free", "free", "errand", "blocked", "meeting"]))
        cost = draw(st.integers(1, 3))
        if kind == "errand":
            slots.append(Errand(100 + s, cost))
        elif kind == "blocked":
            slots.append(Errand(100 + s, cost, blocked=True))
        elif kind == "meeting":
            slots.append(MeetingItem(200 + s, cost, (0, 1)))
        else:
            slots.append(None)
    cal = Calendar(0, tuple(slots))
    meeting = Meeting(999, (0, 1), speaker_order=(0, 1))
    require = draw(st.booleans())
    actions: list[Action] = []
    if draw(st.booleans()):  # aim for a valid batch
        movable = [s for s, x in enumerate(slots) if x is not None and not getattr(x, "blocked", 0)]
        movers = draw(
            st.lists(st.sampled_from(movable), min_size=1, unique=True) if movable else st.just([])
        )
        open_slots = {s for s in range(n) if slots[s] is None} | set(movers)
        for src in movers:
            choices = sorted(open_slots - {src})
            if not choices:
                break
            dest = draw(st.sampled_from(choices))
            open_slots.discard(dest)
            item = slots[src]
            assert item is not None
            actions.append(Reschedule(item.item_id, src, dest, "test"))
        moved = {a.from_slot for a in actions if isinstance(a, Reschedule)}
        free_after = sorted(s for s in open_slots if slots[s] is None or s in moved)
        if require and free_after:
            actions.append(Schedule(999, draw(st.sampled_from(free_after))))
    else:
        for _ in range(draw(st.integers(0, 3))):
            src = draw(st.integers(-1, n))
            item_id = draw(st.integers(99, 110))
            actions.append(Reschedule(item_id, src, draw(st.integers(-1, n))))
        if draw(st.booleans()):
            actions.append(Schedule(draw(st.sampled_from([999, 5])), draw(st.integers(-1, n))))
    return cal, list(draw(st.permutations(actions))), meeting, require


@settings(max_examples=250, deadline=None)
@given(calendars_and_batches())
def test_valid_batches_keep_calendar_consistent(
    case: tuple[Calendar, list[Action], Meeting, bool],
) -> None:
    cal, actions, meeting, require = case
    found = validate_batch(cal, actions, meeting=meeting, require_schedule=require)
    if found:
        with pytest.raises(BatchRejected) as err:
            apply_batch(cal, actions, meeting=meeting, require_schedule=require)
        assert err.value.conflicts == found
        return
    result = apply_batch(cal, actions, meeting=meeting, require_schedule=require)
    new = result.calendar
    moved_from = {a.from_slot for a in actions if isinstance(a, Reschedule)}
    scheduled = [a.slot for a in actions if isinstance(a, Schedule)]
    expected_items = Counter(x for x in cal.slots if x is not None)
    expected_items.update([meeting.as_item()] * len(scheduled))
    assert Counter(x for x in new.slots if x is not None) == expected_items
    for a in actions:
        if isinstance(a, Reschedule):
            assert new.slots[a.to_slot] == cal.slots[a.from_slot]
        else:
            assert new.slots[a.slot] == meeting.as_item()
    targets = {a.to_slot for a in actions if isinstance(a, Reschedule)} | set(scheduled)
    for s, item in enumerate(cal.slots):
        if s not in moved_from | targets:
            assert new.slots[s] == item
        if isinstance(item, Errand) and item.blocked:
            assert new.slots[s] == item
    moved_items = [cal.slots[a.from_slot] for a in actions if isinstance(a, Reschedule)]
    assert result.cost == sum(x.cost for x in moved_items if x is not None)
    assert len(scheduled) == (1 if require else 0)


def test_participants_scheduling_the_same_slot_stay_consistent() -> None:
    m = Meeting(3, (0, 1), speaker_order=(0, 1))
    a = Calendar(0, (Errand(1, 1), None, None))
    b = Calendar(1, (None, Errand(2, 1), None))
    ra = apply_batch(a, [Reschedule(1, 0, 1), Schedule(3, 0)], meeting=m).calendar
    rb = apply_batch(b, [Schedule(3, 0)], meeting=m).calendar
    assert find_inconsistencies([ra, rb]) == ()
    rb_other = apply_batch(b, [Schedule(3, 2)], meeting=m).calendar
    assert find_inconsistencies([ra, rb_other]) == (
        "Meeting M3 is at slot 0 for agent 0 but at slot 2 for agent 1",
    )
