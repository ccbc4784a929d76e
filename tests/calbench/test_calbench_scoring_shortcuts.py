"""Scoring shortcuts give exactly what the full computations give: the
leaderboard's excess VPS per seat (`excess_vps_by_seat`) equals the target rows of the
full F.5 tables (`vps_rows`), float for float, with the F.3 floor and with none (the
whole sums), on games of every reference protocol and condition; and the oracle
attributions' depth-first search finds the same divisions as their factored computation."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from confide.core.benchmark import SeatSpec
from confide.core.trace import TraceRecorder
from confide.envs.calbench.actions import CONDITIONS, seat_of
from confide.envs.calbench.attribution import (
    Divisions,
    _costed_options,
    _factored,
    _search,
    fairness_shares,
    optimal_divisions,
)
from confide.envs.calbench.engine import Game, GameConfig
from confide.envs.calbench.generator import GeneratorConfig, generate_scenario
from confide.envs.calbench.oracle import placement_groups
from confide.envs.calbench.participants import REFERENCE_NAMES, make_participant
from confide.envs.calbench.privacy import excess_vps_by_seat, vps_rows
from confide.envs.calbench.suites import load_suite

TINY = load_suite("tiny")


def test_excess_vps_shortcut_equals_the_f5_rows() -> None:
    moved = 0
    for protocol, condition, sc in itertools.product(REFERENCE_NAMES, CONDITIONS, TINY[:3]):
        trace = TraceRecorder()
        players = {
            seat_of(a): make_participant(seat_of(a), SeatSpec(protocol), {})
            for a in range(sc.num_agents)
        }
        asyncio.run(Game(sc, players, trace, GameConfig(condition=condition)).play())
        for floor in (5.0, 0.0):  # floor 0: the excess is the whole sum
            full = vps_rows(sc, trace.events, game_id="g", floor=floor).excess_by_seat()
            fast = excess_vps_by_seat(sc, trace.events, game_id="g", floor=floor)
            assert fast == full  # exact: same sums in the same order
        moved += sum(1 for total in fast.values() if total)
    assert moved > 0  # some belief moved, so not every sum was trivially 0.0


def test_attribution_search_and_factoring_agree() -> None:
    # every subset-of-meetings problem of generated tasks (blocked errands, varied costs)
    # and of the tiny suite: the depth-first search's divisions and the factored ones
    # give the same count, optimum and per-agent means
    configs = [
        GeneratorConfig(num_agents=4, num_slots=8, num_meetings=4, density=0.7,
                        blocked_errands=1, errand_costs="random", errand_cost_level=3),
        GeneratorConfig(num_agents=5, num_slots=10, num_meetings=5, density_choices=(0.6, 0.9),
                        errand_costs="balanced", errand_cost_level=3),
    ]
    tasks = [generate_scenario(c, seed, score=False) for c in configs for seed in range(6)]
    checked = tied = 0
    for sc in [*tasks, *TINY]:
        calendars, meetings = sc.to_calendars(), sc.to_meetings()
        for size in range(1, len(meetings) + 1):
            chosen = meetings[:size]
            groups = placement_groups(calendars, chosen)
            if groups is None:
                assert optimal_divisions(calendars, chosen) is None
                continue
            options = [_costed_options(calendars, g) for g in groups]
            found, bound = _search(groups, options, len(calendars))
            factored = _factored(groups, options, len(calendars), bound)
            if not found:
                assert factored is None
                continue
            searched = Divisions.of(sorted(found))
            assert factored is not None
            assert (factored.count, factored.optimum) == (searched.count, searched.optimum)
            paid = [a % 3 for a in range(len(calendars))]
            assert fairness_shares(paid, factored) == pytest.approx(
                fairness_shares(paid, searched), abs=1e-12
            )
            checked += 1
            tied += searched.count > 1
    assert checked > 50 and tied > 5


def test_a_copied_scenario_builds_its_own_domain_views() -> None:
    """The domain views are cached per scenario; a copy with other calendars or meetings
    must not inherit the cached ones (the audits' label test copies a scenario)."""
    task = load_suite("tiny")[0]
    assert task.to_calendars() and task.to_meetings()  # both cached now
    emptied = task.model_copy(update={
        "calendars": tuple(tuple(None for _ in row) for row in task.calendars),
        "meetings": task.meetings[:1],
    })
    assert all(slot is None for cal in emptied.to_calendars() for slot in cal.slots)
    assert [m.meeting_id for m in emptied.to_meetings()] == [task.meetings[0].meeting_id]
    assert task.to_calendars() != emptied.to_calendars()


def test_events_of_a_kind_are_what_isinstance_picks() -> None:
    """kinds.py picks events by their distinct types: subclasses included, other types
    left out, trace order kept (the scans of a game's scoring rely on all three)."""
    from pydantic import BaseModel

    from confide.core.trace import EpisodeStart, MessageDelivered
    from confide.envs.calbench.kinds import kinds_of, of_kind

    class Special(MessageDelivered):
        pass

    recorder, scenario = TraceRecorder(), TINY[0]
    players = {
        seat_of(a): make_participant(seat_of(a), SeatSpec("imap"), {})
        for a in range(scenario.num_agents)
    }
    asyncio.run(Game(scenario, players, recorder, GameConfig()).play())
    events: list[object] = list(recorder.events)
    delivered = [e for e in events if isinstance(e, MessageDelivered)]
    assert delivered  # the game sent messages
    special = Special.model_construct(**dict(delivered[0]))
    events.insert(1, special)
    picked = [e for e in events if isinstance(e, MessageDelivered)]
    assert of_kind(events, MessageDelivered) == picked
    assert of_kind(events, MessageDelivered)[0] is special
    assert of_kind(events, EpisodeStart) == []
    assert kinds_of(events, BaseModel) == {type(e) for e in events}  # every event is one
