"""Per-agent oracle attribution over tied optima (attribution.py; the CalBench paper, section 4.2):
hand-derived tied cases, invariance under
relabelling (meetings, agents, slots), the factored computation equal to the enumeration,
and a 50-agent game scored in seconds."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.scoring import score_played
from confide.core.trace import TraceRecorder
from confide.envs.calbench import SPEC, attribution
from confide.envs.calbench.attribution import (
    Divisions,
    _costed_options,
    _factored,
    _search,
    excess_shares,
    fairness_shares,
    optimal_divisions,
)
from confide.envs.calbench.env import play_episode
from confide.envs.calbench.generator import GeneratorConfig, generate_scenario
from confide.envs.calbench.oracle import placement_groups
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem, Slot

Problem = tuple[tuple[Calendar, ...], tuple[Meeting, ...]]


def _errand(cost: int, blocked: bool = False) -> Errand:
    return Errand(errand_id=cost * 10 + blocked, cost=cost, blocked=blocked)


def _pair_tie(offset: int) -> tuple[list[tuple[Slot, ...]], Meeting]:
    """Agents offset, offset+1 and a meeting between them on 4 slots: slot 0 costs the
    first agent 2 (the second is free), slot 1 costs each of them 1, slot 2 is blocked
    for the first and slot 3 for the second. Optimum 2, divided (2, 0) or (1, 1)."""
    rows: list[tuple[Slot, ...]] = [
        (_errand(2), _errand(1), _errand(1, True), None),
        (None, _errand(1), None, _errand(1, True)),
    ]
    return rows, Meeting(offset + 1, (offset, offset + 1))


def _two_ties() -> Problem:
    """Two copies of `_pair_tie` on disjoint agents (0, 1) and (2, 3)."""
    rows0, m0 = _pair_tie(0)
    rows1, m1 = _pair_tie(2)
    rows = rows0 + rows1
    return tuple(Calendar(a, row) for a, row in enumerate(rows)), (m0, m1)


def _factored_only(calendars: Sequence[Calendar], meetings: Sequence[Meeting]) -> Divisions | None:
    """The divisions by the factored path alone (no enumeration, no known bound)."""
    groups = placement_groups(calendars, meetings)
    if groups is None:
        return None
    options = [_costed_options(calendars, g) for g in groups]
    return _factored(groups, options, len(calendars), None)


def test_two_optima_dividing_the_cost_differently() -> None:
    """One meeting between agents 0 and 1 (`_pair_tie`): divisions (1, 1) and (2, 0).
    Paid (0, 2): e = (-1, 1) or (-2, 2), mean_j e_j = 0 in both;
    c_oracle = (1.5, 0.5); excess = mean of (0, 1) and (0, 2) = (0, 1.5);
    fairness = mean of (1, 1) and (2, 2) = (1.5, 1.5). Either optimum alone would give
    fairness 1 or 2 to both agents."""
    rows, meeting = _pair_tie(0)
    calendars = tuple(Calendar(a, row) for a, row in enumerate(rows))
    divisions = optimal_divisions(calendars, (meeting,))
    assert divisions == Divisions(optimum=2, count=2, shares=(((1, 1), (2, 1)), ((1, 1), (0, 1))))
    paid = [0, 2]
    assert divisions.mean(lambda a, o: float(o)) == [1.5, 0.5]
    assert excess_shares(paid, divisions) == [0.0, 1.5]
    assert fairness_shares(paid, divisions) == [1.5, 1.5]
    factored = _factored_only(calendars, (meeting,))
    assert factored is not None
    assert factored.count == 2 and factored.optimum == 2
    assert fairness_shares(paid, factored) == [1.5, 1.5]
    assert excess_shares(paid, factored) == [0.0, 1.5]


def test_every_division_counts_once_not_every_distinct_share() -> None:
    """A meeting of agents 0, 1, 2 on 4 slots where slot k is free for agent k and costs
    the other two 1 each (slot 3 is blocked for agent 0): divisions (0, 1, 1), (1, 0, 1),
    (1, 1, 0). Agent 0's share is 0 in one and 1 in two: mean 2/3 (a mean over its
    distinct shares {0, 1} would say 1/2). Paid (2, 0, 0): e = (2, -1, -1), (1, 0, -1),
    (1, -1, 0), mean 0 each; excess (2, 0, 0), (1, 0, 0), (1, 0, 0) -> (4/3, 0, 0);
    fairness (2, 1, 1), (1, 0, 1), (1, 1, 0) -> (4/3, 2/3, 2/3)."""
    one = _errand(1)
    calendars = (
        Calendar(0, (None, one, one, _errand(1, True))),
        Calendar(1, (one, None, one, None)),
        Calendar(2, (one, one, None, None)),
    )
    meetings = (Meeting(1, (0, 1, 2)),)
    for divisions in (optimal_divisions(calendars, meetings), _factored_only(calendars, meetings)):
        assert divisions is not None
        assert (divisions.optimum, divisions.count) == (2, 3)
        assert divisions.mean(lambda a, o: float(o)) == pytest.approx([2 / 3] * 3)
        assert excess_shares([2, 0, 0], divisions) == pytest.approx([4 / 3, 0, 0])
        assert fairness_shares([2, 0, 0], divisions) == pytest.approx([4 / 3, 2 / 3, 2 / 3])


def test_independent_ties_multiply_and_factor() -> None:
    """Two `_pair_tie`s on disjoint agents: 2 x 2 = 4 divisions. Enumerated, each agent
    lists its share in all four; factored, in its own tie's two; the means agree."""
    calendars, meetings = _two_ties()
    enumerated = optimal_divisions(calendars, meetings)
    factored = _factored_only(calendars, meetings)
    assert enumerated is not None and factored is not None
    assert (enumerated.count, enumerated.optimum) == (4, 4)
    assert (factored.count, factored.optimum) == (4, 4)
    assert [len(s) for s in enumerated.shares] == [4, 4, 4, 4]
    assert factored.shares == (((1, 1), (2, 1)), ((0, 1), (1, 1))) * 2
    paid = [0, 2, 2, 0]  # e = (-o0, 2 - o1, 2 - o2, -o3), mean_j e_j = 0
    assert fairness_shares(paid, factored) == fairness_shares(paid, enumerated)
    assert fairness_shares(paid, factored) == [1.5, 1.5, 0.5, 0.5]


@st.composite
def problems(draw: st.DrawFn) -> Problem:
    """Small random placement problems: 2-4 agents, 3-6 slots, errands of cost 1-3
    (some blocked), at most one prior meeting, 1-3 incoming meetings."""
    n, t = draw(st.integers(2, 4)), draw(st.integers(3, 6))
    rows: list[list[Slot]] = [[None] * t for _ in range(n)]
    if draw(st.booleans()):
        parts = tuple(sorted(draw(st.sets(st.integers(0, n - 1), min_size=2, max_size=3))))
        slot, cost = draw(st.integers(0, t - 1)), draw(st.integers(1, 3))
        for p in parts:
            rows[p][slot] = MeetingItem(99, cost, parts)
    ids = iter(range(1, 10_000))
    for row in rows:
        for s in range(t):
            if row[s] is None:
                kind = draw(st.sampled_from(["free", "errand", "errand", "blocked"]))
                if kind != "free":
                    row[s] = Errand(next(ids), draw(st.integers(1, 3)), blocked=kind == "blocked")
    meetings = tuple(
        Meeting(k + 1, tuple(sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3)))))
        for k in range(draw(st.integers(1, 3)))
    )
    return tuple(Calendar(a, tuple(row)) for a, row in enumerate(rows)), meetings


def _relabelled(
    problem: Problem, agents: Sequence[int], mirror: bool, order: Sequence[int]
) -> Problem:
    """Agent a becomes agents[a], slots are mirrored when `mirror`, meetings come in
    `order`."""
    calendars, meetings = problem

    def item(x: Slot) -> Slot:
        if isinstance(x, MeetingItem):
            moved = tuple(sorted(agents[p] for p in x.participants))
            return MeetingItem(x.meeting_id, x.cost, moved)
        return x

    rows: list[tuple[Slot, ...]] = [()] * len(calendars)
    for a, cal in enumerate(calendars):
        row = tuple(item(x) for x in cal.slots)
        rows[agents[a]] = row[::-1] if mirror else row
    moved = tuple(
        Meeting(m.meeting_id, tuple(sorted(agents[p] for p in m.participants)))
        for m in (meetings[i] for i in order)
    )
    return tuple(Calendar(a, row) for a, row in enumerate(rows)), moved


def _means(divisions: Divisions, paid: Sequence[int]) -> list[list[float]]:
    return [
        divisions.mean(lambda a, o: float(o)),
        excess_shares(paid, divisions),
        fairness_shares(paid, divisions),
    ]


@settings(max_examples=100, deadline=None)
@given(problems(), st.randoms(use_true_random=False))
def test_attribution_ignores_labels_and_the_way_it_is_computed(
    problem: Problem, rnd: random.Random
) -> None:
    """Relabelling agents, mirroring slots or reordering meetings moves which optimum
    a solver would return first; the divisions (as multisets per agent) and every mean
    stay put, and the factored path agrees with the enumeration."""
    calendars, meetings = problem
    n = len(calendars)
    agents = list(range(n))
    rnd.shuffle(agents)
    order = list(range(len(meetings)))
    rnd.shuffle(order)
    paid = [rnd.randint(0, 4) for _ in range(n)]
    base = optimal_divisions(calendars, meetings)
    moved_problem = _relabelled(problem, agents, rnd.random() < 0.5, order)
    moved = optimal_divisions(*moved_problem)
    factored = _factored_only(calendars, meetings)
    if base is None:
        assert moved is None and factored is None
        return
    assert moved is not None and factored is not None
    assert (moved.optimum, moved.count) == (base.optimum, base.count)
    assert (factored.optimum, factored.count) == (base.optimum, base.count)
    for a in range(n):
        assert sorted(moved.shares[agents[a]]) == sorted(base.shares[a])
    moved_paid = [0] * n
    for a in range(n):
        moved_paid[agents[a]] = paid[a]
    for got, want, other in zip(_means(moved, moved_paid), _means(base, paid),
                                _means(factored, paid), strict=True):
        assert [got[agents[a]] for a in range(n)] == pytest.approx(want, abs=1e-12)
        assert other == pytest.approx(want, abs=1e-12)


def test_the_search_hands_over_past_its_node_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no node budget the search gives up and the factored path answers alone."""
    calendars, meetings = _two_ties()
    groups = placement_groups(calendars, meetings)
    assert groups is not None
    options = [_costed_options(calendars, g) for g in groups]
    assert _search(groups, options, len(calendars))[0] is not None
    monkeypatch.setattr(attribution, "SEARCH_NODES", 0)
    assert _search(groups, options, len(calendars)) == (None, None)
    optimal_divisions.cache_clear()
    try:
        divisions = optimal_divisions(calendars, meetings)
        assert divisions is not None
        assert divisions.shares == (((1, 1), (2, 1)), ((0, 1), (1, 1))) * 2
    finally:
        optimal_divisions.cache_clear()


def _no_models(spec: str, **_: object) -> object:
    raise AssertionError(f"reference protocols call no model ({spec})")


@pytest.mark.slow
def test_a_50_agent_game_scores_in_seconds() -> None:
    """N=50, T=96, M=40 (bench/calbench_scale.py's family). Its full
    oracle has over a million distinct optimal divisions (independent ties multiply),
    so enumerating them is out of reach; the factored attribution scores the whole
    game, metrics and leaderboard columns, in a few CPU seconds."""
    config = GeneratorConfig(
        num_agents=50, num_slots=96, num_meetings=40, participants_per_meeting=3,
        density=0.8, blocked_errands=2, errand_costs="balanced", errand_cost_level=3,
    )
    task = generate_scenario(config, 2026, task_id="scale-n50", score=False)
    ctx = EpisodeContext(
        episode_id=task.task_id, task=task, lineup=parse_lineup("imap"), seed=0,
        trace=TraceRecorder(task.task_id), model_factory=_no_models, condition="dm",
    )
    asyncio.run(play_episode(ctx))
    assert SPEC.score_episode is not None
    start = time.process_time()
    result = asyncio.run(score_played(ctx, SPEC.score_episode))
    elapsed = time.process_time() - start
    divisions = optimal_divisions(task.to_calendars(), task.to_meetings())
    assert divisions is not None and divisions.count > 10**6
    assert result.metrics["oracle_divisions"] == divisions.count  # every meeting scheduled
    assert all(row["fairness"] is not None for row in result.rows)
    assert elapsed < 10, elapsed


def test_placements_with_one_division_count_once() -> None:
    """Agents 0, 1, 2 on 4 slots; meetings A = (0, 1) and B = (0, 2) share agent 0, so
    they take different slots, and agent 0 is blocked at slot 3. Agent 1 is blocked at
    slot 0 and has cost-1 errands at slots 1 and 2; agent 2 has cost-1 errands at slots
    0 and 1 and is blocked at slot 2 (slot 3 is free for both, to land displaced errands).
    Optimal placements (A, B) = (1, 0), (2, 0), (2, 1), each costing agents 1 and 2 one:
    three placements, one division (0, 1, 1), by the search and by the factored count."""
    one = _errand(1)
    calendars = (
        Calendar(0, (None, None, None, _errand(1, True))),
        Calendar(1, (_errand(1, True), one, one, None)),
        Calendar(2, (one, one, _errand(1, True), None)),
    )
    meetings = (Meeting(1, (0, 1)), Meeting(2, (0, 2)))
    for divisions in (optimal_divisions(calendars, meetings), _factored_only(calendars, meetings)):
        assert divisions == Divisions(optimum=2, count=1, shares=(((0, 1),), ((1, 1),), ((1, 1),)))


def _brute_force(problem: Problem) -> tuple[int, int, list[dict[int, int]]] | None:
    """Every placement of the meetings, one slot each, no agent twice in a slot: the
    optimum, the number of distinct optimal cost vectors and, per agent, how many of
    them give it each cost."""
    calendars, meetings = problem
    groups = placement_groups(calendars, meetings)
    if groups is None:
        return None
    options = [_costed_options(calendars, g) for g in groups]
    vectors: dict[int, set[tuple[int, ...]]] = {}
    for choice in itertools.product(*options):
        cells = [(p, slot) for g, (_, slot, _) in zip(groups, choice, strict=True)
                 for p in g.participants]
        if len(set(cells)) < len(cells):
            continue
        paid = [0] * len(calendars)
        for g, (_, _, costs) in zip(groups, choice, strict=True):
            for p, c in zip(g.participants, costs, strict=True):
                paid[p] += c
        vectors.setdefault(sum(paid), set()).add(tuple(paid))
    if not vectors:
        return None
    best = min(vectors)
    hist: list[dict[int, int]] = [{} for _ in calendars]
    for v in vectors[best]:
        for a, share in enumerate(v):
            hist[a][share] = hist[a].get(share, 0) + 1
    return best, len(vectors[best]), hist


@st.composite
def tied_problems(draw: st.DrawFn) -> Problem:
    """Random problems with several meetings sharing agents (so ties span meetings):
    3-5 agents, 4-6 slots, errands of cost 1-2 (some blocked), 2-5 meetings of 2-3."""
    n, t = draw(st.integers(3, 5)), draw(st.integers(4, 6))
    ids = iter(range(1, 10_000))
    rows = [
        tuple(
            None
            if kind == "free"
            else Errand(next(ids), draw(st.integers(1, 2)), blocked=kind == "blocked")
            for kind in (
                draw(st.sampled_from(["free", "errand", "errand", "errand", "blocked"]))
                for _ in range(t)
            )
        )
        for _ in range(n)
    ]
    meetings = tuple(
        Meeting(k + 1, tuple(sorted(draw(st.sets(st.integers(0, n - 1), min_size=2, max_size=3)))))
        for k in range(draw(st.integers(2, 5)))
    )
    return tuple(Calendar(a, row) for a, row in enumerate(rows)), meetings


@settings(max_examples=150, deadline=None)
@given(tied_problems())
def test_the_factored_count_equals_brute_force(problem: Problem) -> None:
    """The factored path (independent ties, each counted by the determinized walk)
    gives the brute force's optimum, number of distinct divisions and, per agent, how
    many divisions give it each share (as a share of its own tie's divisions: the
    brute force's counts divided by the other ties' product)."""
    want = _brute_force(problem)
    got = _factored_only(*problem)
    if want is None:
        assert got is None
        return
    assert got is not None
    optimum, count, hist = want
    assert (got.optimum, got.count) == (optimum, count)
    for a, pairs in enumerate(got.shares):
        tie = sum(w for _, w in pairs)
        assert count % tie == 0
        assert {v: w * (count // tie) for v, w in pairs} == hist[a]


def test_a_tie_too_large_to_count_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past TIE_STATES states the count stops with an error naming the tie's size."""
    calendars, meetings = _two_ties()
    monkeypatch.setattr(attribution, "TIE_STATES", 1)
    with pytest.raises(attribution.AttributionTooHardError, match="tie of 1 meetings"):
        _factored_only(calendars, meetings)


@pytest.mark.slow
def test_a_50_agent_task_whose_optimum_is_one_big_tie_is_counted() -> None:
    """Seed 1 of bench/calbench_scale.py's N=50 family: optimum 13 over a floor of 9,
    and at that slack all 40 meetings fall into one tie (the earlier dynamic program over
    sets of divisions never finished). Counted exactly, it has 56,160 distinct optimal
    divisions, the number an enumeration of every division (budgeted by the optimum)
    also gives; it must finish, here in seconds."""
    config = GeneratorConfig(
        num_agents=50, num_slots=96, num_meetings=40, participants_per_meeting=3,
        density=0.8, blocked_errands=2, errand_costs="balanced", errand_cost_level=3,
    )
    task = generate_scenario(config, 1, task_id="scale-n50-seed1", score=False)
    calendars, meetings = task.to_calendars(), task.to_meetings()
    groups = placement_groups(calendars, meetings)
    assert groups is not None
    options = [_costed_options(calendars, g) for g in groups]
    assert sum(opts[0][0] for opts in options) == 9
    within = [[o for o in opts if o[0] <= opts[0][0] + 4] for opts in options]
    kept = attribution._fix(groups, within)
    assert kept is not None and [len(t) for t in attribution._ties(groups, kept)] == [40]
    divisions = optimal_divisions(calendars, meetings)
    assert divisions is not None and (divisions.optimum, divisions.count) == (13, 56_160)
    for pairs in divisions.shares:
        assert sum(w for _, w in pairs) in (1, 56_160)
