"""CalBench metrics (envs/calbench/metrics.py) pinned by behaviour: which published tasks
are mapped back to the 1/2/3 scale, which moves count as moved prior meetings, and which
greedy baseline a game reports."""

from __future__ import annotations

from typing import Literal

from test_calbench_engine_support import errand, scenario

from confide.envs.calbench import events as cal
from confide.envs.calbench.engine import GameOutcome
from confide.envs.calbench.metrics import FIXTURE_VARIED_COSTS, evaluate, metric_scale
from confide.envs.calbench.scenario import GreedyRecord, PublishedReference, Scenario
from confide.envs.calbench.world import Calendar, MeetingItem

FIXTURE = PublishedReference(source="fixture.jsonl:1")


def _published(*costs: int) -> Scenario:
    row = [errand(i + 1, c) for i, c in enumerate(costs)]
    sc = scenario([[*row, None], [None] * (len(costs) + 1)], [(9, (0, 1), (0, 1))])
    return sc.model_copy(update={"published": FIXTURE})


def test_a_fixture_using_some_of_the_varied_costs_is_rescaled() -> None:
    """A published varied-cost task need not use all three values."""
    assert metric_scale(_published(1, 100)) == FIXTURE_VARIED_COSTS
    assert metric_scale(_published(1000, 1000)) == FIXTURE_VARIED_COSTS
    assert metric_scale(_published(1, 100, 1000)) == FIXTURE_VARIED_COSTS


def test_a_uniform_or_foreign_cost_fixture_is_left_alone() -> None:
    """All costs 1 (the uniform setting) are on the metric scale already; a cost outside
    1/100/1000 means the task is not on the fixtures' varied scale; an unpublished task
    is never rescaled."""
    assert metric_scale(_published(1, 1)) is None
    assert metric_scale(_published(1, 5, 100)) is None
    assert metric_scale(_published(1, 100).model_copy(update={"published": None})) is None


def _moves(seat: str, *moves: tuple[Literal["errand", "meeting"], int]) -> cal.BatchApplied:
    return cal.BatchApplied(
        seat=seat,
        data=cal.BatchAppliedData(
            phase="DECISION",
            actions=[],
            cost=len(moves),
            display_cost=len(moves),
            calendar="",
            moves=[
                cal.Move(kind=kind, item_id=item, from_slot=0, to_slot=1, cost=1)
                for kind, item in moves
            ],
        ),
    )


def test_prior_meetings_moved_counts_distinct_meeting_copies_and_never_errands() -> None:
    """agent0 moves errand 1, then prior meeting 7 twice; agent1 moves its copy of 7 once:
    two (seat, meeting) copies moved, the errand not among them."""
    sc = scenario([[None, None], [None, None]], [(1, (0, 1), (0, 1))])
    item = MeetingItem(1, 1, (0, 1))
    outcome = GameOutcome((Calendar(0, (item, None)), Calendar(1, (item, None))), {1: True})
    errand_only = [_moves("agent0", ("errand", 1))]
    assert evaluate(sc, errand_only, outcome).game["prior_meetings_moved"] == 0
    events = [
        *errand_only,
        _moves("agent0", ("meeting", 7)),
        _moves("agent0", ("meeting", 7)),
        _moves("agent1", ("meeting", 7)),
    ]
    report = evaluate(sc, events, outcome)
    assert report.game["prior_meetings_moved"] == 2
    assert [r["cost_real"] for r in report.rows] == [3, 1]


def test_the_recorded_greedy_baseline_is_reported_unless_costs_are_rescaled() -> None:
    """Slot costs for a meeting of agents 0 and 1: s0 100 (agent 0's errand), s1 1000,
    s2 1000 (agent 1's). Greedy takes s0: 100 on the fixture scale, 2 on the 1/2/3 scale.
    A rescaled fixture's recorded greedy (on its own scale) is recomputed on the metric
    scale; a task on the metric scale reports the greedy baseline it records."""
    sc = scenario(
        [[errand(1, 100), errand(2, 1000), None], [None, None, errand(3, 1000)]],
        [(1, (0, 1), (0, 1))],
    )
    recorded = GreedyRecord(cost=100, assignments={1: 0}, per_agent_cost=(100, 0))
    item = MeetingItem(1, 1, (0, 1))
    outcome = GameOutcome(
        (Calendar(0, (item, None, None)), Calendar(1, (item, None, None))), {1: True}
    )
    fixture = sc.model_copy(update={"published": FIXTURE, "greedy": recorded})
    assert evaluate(fixture, [], outcome).game["cost_greedy"] == 2
    own = sc.model_copy(update={"greedy": recorded.model_copy(update={"cost": 7})})
    assert evaluate(own, [], outcome).game["cost_greedy"] == 7
