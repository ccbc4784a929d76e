"""Scoring reads a game's outcome back from its trace: replaying the
committed batches gives exactly the final calendars and resolutions the engine returned,
for every reference protocol and condition of the tiny suite, and a trace that does not
belong to its task is refused."""

from __future__ import annotations

import asyncio

import pytest

from confide.core.benchmark import SeatSpec
from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.calbench.actions import CONDITIONS, seat_of
from confide.envs.calbench.engine import Game, GameConfig
from confide.envs.calbench.engine.outcome import outcome_from_events
from confide.envs.calbench.participants import REFERENCE_NAMES, make_participant
from confide.envs.calbench.suites import load_suite
from confide.errors import ConfideError

TINY = load_suite("tiny")


@pytest.mark.parametrize("protocol", REFERENCE_NAMES)
def test_replayed_outcome_equals_the_engines(protocol: str) -> None:
    for condition in CONDITIONS:
        for sc in TINY[:3]:
            trace = TraceRecorder()
            players = {
                seat_of(a): make_participant(seat_of(a), SeatSpec(protocol), {})
                for a in range(sc.num_agents)
            }
            game = Game(sc, players, trace, GameConfig(condition=condition or "dm"))
            outcome = asyncio.run(game.play())
            assert outcome_from_events(sc, trace.events) == outcome


def test_a_batch_that_does_not_replay_is_refused() -> None:
    for sc in TINY:  # the first game in which someone moves an item
        trace = TraceRecorder()
        players = {seat_of(a): make_participant(seat_of(a), SeatSpec("dsm-welfare"), {})
                   for a in range(sc.num_agents)}
        asyncio.run(Game(sc, players, trace).play())
        moved = [e for e in trace.events
                 if isinstance(e, EnvEvent) and e.name == "batch_applied" and e.data.moves]
        if moved:
            break
    moved[0].data.moves[0].to_slot += 1
    with pytest.raises(ConfideError, match="not played on this task"):
        outcome_from_events(sc, trace.events)


def test_final_state_json_is_the_stored_slot_form() -> None:
    from confide.envs.calbench.engine.outcome import GameOutcome
    from confide.envs.calbench.scenario import slot_from_domain
    from confide.envs.calbench.world import Calendar, Errand, MeetingItem

    slots = (None, Errand(3, 2, True, "L1"), MeetingItem(7, 1, (0, 2), None), Errand(4, 1))
    (row,) = GameOutcome((Calendar(0, slots),), {}).to_json()["calendars"]
    for item, stored in zip(slots, row, strict=True):
        model = slot_from_domain(item)
        assert stored == (None if model is None else model.model_dump(mode="json"))
    assert row[2] == {
        "kind": "meeting", "meeting_id": 7, "cost": 1, "participants": [0, 2], "label_id": None
    }
