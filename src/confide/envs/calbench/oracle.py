"""Full-information CP-SAT oracle and a greedy baseline (the CalBench paper §3, §3.1, §4.2, A.1).

Oracle problem. Given calendars and the incoming meetings, place every incoming meeting
at one slot on all its participants' calendars, possibly moving previously scheduled
meetings (which must stay on a common slot), so that the total displacement cost is
minimal. An errand under a placed meeting is displaced (its cost is paid once, by its
owner); a blocked errand can never be displaced; moving a prior meeting costs its cost on
each participant's calendar (§3). Displaced errands need landing slots, and every meeting
consumes exactly one free slot of each participant wherever it goes, so a placement is
realizable iff each agent's items plus its incoming meetings fit in T slots; we check that
once and then need no landing-slot variables. With no prior meetings this is exactly the
model of A.1 step 5.

Model: one Boolean per (meeting, allowed slot), exactly one per meeting, at most one
meeting per (agent, slot), minimize the linear cost. Solving is deterministic
(`num_workers=1`, fixed `random_seed`). Canonical tie-break: among optimal solutions we
return the lexicographically smallest slot vector (incoming meetings in stream order, then
prior meetings by id): slots of a chunk of meetings form a mixed-radix number that fits
in 50 bits; the first chunk is folded into the cost objective when cost * radix + chunk
still fits (one solve for the 16-slot suites), later chunks are minimized one by one with
the cost and earlier chunks fixed.

Search first. The benchmark's problems are small (a few meetings over 16 slots), so the
canonical solution is found by two depth-first searches, without CP-SAT: the first finds
the optimal cost (meetings with the fewest options first, cheapest option first, pruned
by the cheapest completion of the meetings left), the second walks the placements in the
tie-break's own order (groups as above, each slot ascending) under that cost bound, so the
first complete placement it reaches is the canonical one. CP-SAT (and importing it, over a
second with its pandas dependency) is left for problems where a search passes
`SEARCH_NODES` nodes; both give the same solution, which tests check on every shipped and
fixture task.

Solving is memoized per process (`solve_oracle` keeps the last `SOLVE_CACHE_SIZE` problems):
the same problem recurs within a run (a game's metrics, its audits, every lineup and
condition of the same task), so a run solves each distinct (calendars, meetings) problem
once. Solutions are shared between callers and must not be mutated. Across processes they
are kept on disk (`solvecache`: keyed by the problem and this module's `SOLVER_VERSION` and
source, in the user's cache directory or `$CONFIDE_ORACLE_CACHE`), so a later run of the
same tasks reads them instead of searching.

Per-agent attribution (for c^oracle_{g,i}, §4.2): an agent pays for its own displaced
errands plus the cost of every prior meeting it attends that is moved.

Greedy baseline (our definition; the paper does not specify one): meetings in stream
order, each at the slot with the lowest immediate displacement cost over its
participants (ties: lowest slot), never moving prior meetings, each displaced errand sent
to its owner's lowest free slot; it stops at the first meeting with no usable slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, cast

from confide.envs.calbench.scenario import GreedyRecord, SolutionRecord
from confide.envs.calbench.solvecache import DiskCache, problem_text
from confide.envs.calbench.world import (
    Calendar,
    Errand,
    Meeting,
    MeetingItem,
    Reschedule,
    Schedule,
    apply_batch,
    find_inconsistencies,
)

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

SOLVER_SEED = 20260
SOLVER_VERSION = "1"
"""Bump when the oracle's answer to a problem changes (with the source hash, it names the
disk cache's folder: `solvecache`)."""
SOLVE_CACHE_SIZE = 4096
_LEX_BITS = 50
SEARCH_NODES = 50_000
"""Nodes a search may visit (per search) before `solve_oracle` hands the problem to CP-SAT."""


@dataclass(frozen=True, slots=True)
class Solution:
    """An oracle solution: meeting id -> slot, total and per-agent displacement cost, and
    the prior meetings it moves (meeting id -> new slot)."""

    cost: int
    assignments: dict[int, int]
    per_agent_cost: tuple[int, ...]
    prior_moves: dict[int, int]

    def to_record(self) -> SolutionRecord:
        return SolutionRecord(
            cost=self.cost,
            assignments=self.assignments,
            per_agent_cost=self.per_agent_cost,
            prior_moves=self.prior_moves,
        )


@dataclass(frozen=True, slots=True)
class GreedySolution:
    """The greedy baseline's result; `cost` is None if it stopped at `failed_meeting`."""

    cost: int | None
    assignments: dict[int, int]
    per_agent_cost: tuple[int, ...]
    failed_meeting: int | None

    def to_record(self) -> GreedyRecord:
        return GreedyRecord(
            cost=self.cost,
            assignments=self.assignments,
            per_agent_cost=self.per_agent_cost,
            failed_meeting=self.failed_meeting,
        )


@dataclass(frozen=True, slots=True)
class _Group:
    """A meeting to place: incoming (origin None) or prior (origin = its current slot)."""

    meeting_id: int
    participants: tuple[int, ...]
    origin: int | None
    move_costs: tuple[int, ...]  # per participant: the cost of moving its copy
    options: tuple[tuple[int, int], ...]  # (slot, errand displacement cost at that slot)


def check_calendars(calendars: Sequence[Calendar]) -> int:
    """Common slot count of a consistent set of calendars (ValueError otherwise)."""
    if not calendars:
        raise ValueError("need at least one calendar")
    sizes = {cal.num_slots for cal in calendars}
    if len(sizes) != 1:
        raise ValueError(f"calendars have different lengths {sorted(sizes)}")
    if [cal.owner for cal in calendars] != list(range(len(calendars))):
        raise ValueError("calendars must be given in agent order 0..N-1")
    problems = find_inconsistencies(calendars)
    if problems:
        raise ValueError(f"inconsistent calendars: {problems[0]}")
    return sizes.pop()


def fits(calendars: Sequence[Calendar], meetings: Sequence[Meeting]) -> bool:
    """Capacity: every agent's items plus its incoming meetings fit in its calendar."""
    load = [sum(item is not None for item in cal.slots) for cal in calendars]
    for m in meetings:
        for p in m.participants:
            load[p] += 1
    return all(n <= cal.num_slots for n, cal in zip(load, calendars, strict=True))


def placement_cost(
    calendars: Sequence[Calendar], participants: Sequence[int], slot: int
) -> int | None:
    """Errand cost of putting a meeting at `slot`; None if some participant has a blocked
    errand there. Meetings already there are not charged here (they must move)."""
    total = 0
    for p in participants:
        item = calendars[p].slots[slot]
        if isinstance(item, Errand):
            if item.blocked:
                return None
            total += item.cost
    return total


def _groups(calendars: Sequence[Calendar], meetings: Sequence[Meeting]) -> list[_Group]:
    n_slots = calendars[0].num_slots
    groups: list[_Group] = []

    def options(participants: Sequence[int]) -> tuple[tuple[int, int], ...]:
        out = []
        for s in range(n_slots):
            c = placement_cost(calendars, participants, s)
            if c is not None:
                out.append((s, c))
        return tuple(out)

    prior: dict[int, tuple[int, MeetingItem]] = {}
    for cal in calendars:
        for s, item in enumerate(cal.slots):
            if isinstance(item, MeetingItem):
                prior.setdefault(item.meeting_id, (s, item))
    for m in meetings:
        if m.meeting_id in prior:
            raise ValueError(f"incoming meeting M{m.meeting_id} is already on the calendars")
        groups.append(_Group(m.meeting_id, m.participants, None, (), options(m.participants)))
    for mid in sorted(prior):
        s, item = prior[mid]
        # consistent calendars (checked) hold a copy on every participant's calendar
        costs = tuple(cast(MeetingItem, calendars[p].slots[s]).cost for p in item.participants)
        groups.append(_Group(mid, item.participants, s, costs, options(item.participants)))
    return groups


def cp_solver() -> cp_model.CpSolver:
    """A CP-SAT solver configured as every solve in confide needs it: one worker, a fixed
    seed, and the process's SIGINT left alone."""
    from ortools.sat.python import cp_model  # imported only when a problem needs CP-SAT

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SOLVER_SEED
    # CP-SAT's own SIGINT handler would end a search early on Ctrl-C and, when the solve
    # ends, reset SIGINT to the default (killing the process on the next Ctrl-C instead of
    # letting the runner stop cleanly, `confide.runner.interrupt`)
    solver.parameters.catch_sigint_signal = False
    return solver


def _fit_width(scale: int, radix: int, limit: int) -> int:
    """Largest L <= limit with scale * radix**L < 2**50."""
    width = 0
    while width < limit and scale * radix ** (width + 1) < 2**_LEX_BITS:
        width += 1
    return width


def placement_groups(
    calendars: Sequence[Calendar], meetings: Sequence[Meeting]
) -> list[_Group] | None:
    """The meetings' placement groups, or None when they cannot all be placed (too many
    for the free slots, or a meeting with no usable slot): the common prologue of every
    exact solve."""
    if not fits(calendars, meetings):
        return None
    groups = _groups(calendars, meetings)
    return None if any(not g.options for g in groups) else groups


def _lex_chunks(start: int, count: int, radix: int) -> list[range]:
    width = max(1, _fit_width(1, radix, count))
    return [range(i, min(i + width, count)) for i in range(start, count, width)]


def solve_oracle(
    calendars: Sequence[Calendar], meetings: Sequence[Meeting], *, canonical: bool = True
) -> Solution | None:
    """Minimum total displacement cost with every incoming meeting scheduled; None when
    infeasible. `canonical=False` skips the lexicographic tie-break (same cost, faster).
    Memoized (module docstring): the result is shared, do not mutate it."""
    return _solve_cached(tuple(calendars), tuple(meetings), canonical)


@lru_cache(maxsize=SOLVE_CACHE_SIZE)
def _solve_cached(
    calendars: tuple[Calendar, ...], meetings: tuple[Meeting, ...], canonical: bool
) -> Solution | None:
    n_slots = check_calendars(calendars)
    problem = f"{problem_text(calendars, meetings)}\ncanonical={canonical}"
    return _DISK.get_or_compute(
        problem, lambda: _solve(calendars, meetings, n_slots, canonical)
    )


def _solve(
    calendars: tuple[Calendar, ...], meetings: tuple[Meeting, ...], n_slots: int,
    canonical: bool,
) -> Solution | None:
    groups = placement_groups(calendars, meetings)
    if groups is None:
        return None
    chosen = search_canonical(groups, SEARCH_NODES)
    if chosen is None:
        return None
    if chosen is not False:
        return _solution(calendars, groups, chosen)
    return solve_cpsat(calendars, groups, n_slots, canonical)


def _option_cost(g: _Group, slot: int, errands: int) -> int:
    """What placing group `g` at `slot` costs: the errands under it, plus every copy's
    move cost when a prior meeting leaves its slot."""
    return errands + (sum(g.move_costs) if g.origin is not None and slot != g.origin else 0)


def search_canonical(groups: Sequence[_Group], budget: int) -> list[int] | Literal[False] | None:
    """The canonical solution's slot per group by search (module docstring): None when no
    placement exists, False when a search passed `budget` nodes."""
    costed = [[(_option_cost(g, s, c), s) for s, c in g.options] for g in groups]
    optimum = _optimum(groups, costed, budget)
    if optimum is None or optimum is False:
        return optimum
    return _first_at(groups, costed, optimum, budget)


def _optimum(
    groups: Sequence[_Group], costed: Sequence[list[tuple[int, int]]], budget: int
) -> int | Literal[False] | None:
    """The minimum total cost of a placement (None: none exists; False: over budget)."""
    order = sorted(range(len(groups)), key=lambda i: (len(costed[i]), i))
    parts = [groups[i].participants for i in order]
    options = [sorted(costed[i]) for i in order]
    rest = [0] * (len(order) + 1)
    for depth in range(len(order) - 1, -1, -1):
        rest[depth] = rest[depth + 1] + options[depth][0][0]
    used: dict[int, int] = {}  # agent -> bitmask of its slots taken
    best: int | None = None
    nodes = 0

    def visit(depth: int, total: int) -> bool:
        nonlocal best, nodes
        nodes += 1
        if nodes > budget:
            return False
        if depth == len(order):
            best = total
            return True
        for cost, slot in options[depth]:
            if best is not None and total + cost + rest[depth + 1] >= best:
                break  # cheapest first: the other options cannot improve on `best` either
            bit = 1 << slot
            if any(used.get(p, 0) & bit for p in parts[depth]):
                continue
            for p in parts[depth]:
                used[p] = used.get(p, 0) | bit
            complete = visit(depth + 1, total + cost)
            for p in parts[depth]:
                used[p] ^= bit
            if not complete:
                return False
        return True

    return best if visit(0, 0) else False


def _first_at(
    groups: Sequence[_Group], costed: Sequence[list[tuple[int, int]]], optimum: int, budget: int
) -> list[int] | Literal[False]:
    """The lexicographically smallest slot vector (groups in order) of a placement costing
    `optimum` (one exists) or False past `budget` nodes."""
    rest = [0] * (len(groups) + 1)
    for depth in range(len(groups) - 1, -1, -1):
        rest[depth] = rest[depth + 1] + min(cost for cost, _ in costed[depth])
    used: dict[int, int] = {}
    chosen: list[int] = []
    nodes = 0

    def visit(depth: int, total: int) -> bool | None:
        """True: found; None: no placement below; False: over budget."""
        nonlocal nodes
        nodes += 1
        if nodes > budget:
            return False
        if depth == len(groups):
            return True
        parts = groups[depth].participants
        for cost, slot in costed[depth]:  # slots ascending
            if total + cost + rest[depth + 1] > optimum:
                continue
            bit = 1 << slot
            if any(used.get(p, 0) & bit for p in parts):
                continue
            for p in parts:
                used[p] = used.get(p, 0) | bit
            chosen.append(slot)
            found = visit(depth + 1, total + cost)
            if found is not None:
                return found
            chosen.pop()
            for p in parts:
                used[p] ^= bit
        return None

    found = visit(0, 0)
    if found is None:
        raise RuntimeError("the oracle search lost its optimum")  # cannot happen
    return chosen if found else False


def solve_cpsat(
    calendars: Sequence[Calendar], groups: Sequence[_Group], n_slots: int, canonical: bool
) -> Solution | None:
    """The same problem by CP-SAT (the module docstring's model and tie-break)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    cells: dict[tuple[int, int], list[cp_model.IntVar]] = {}
    cost_terms = []
    bound = 0
    for gi, g in enumerate(groups):
        coefs = []
        for s, c in g.options:
            var = model.new_bool_var(f"m{g.meeting_id}_s{s}")
            x[gi, s] = var
            moved = g.origin is not None and s != g.origin
            coefs.append(c + (sum(g.move_costs) if moved else 0))
            if coefs[-1]:
                cost_terms.append(coefs[-1] * var)
            for p in g.participants:
                cells.setdefault((p, s), []).append(var)
        bound += max(coefs)
        model.add_exactly_one(x[gi, s] for s, _ in g.options)
    for cell_vars in cells.values():
        if len(cell_vars) > 1:
            model.add_at_most_one(cell_vars)
    cost = cp_model.LinearExpr.sum(cost_terms)
    slot_expr = [
        cp_model.LinearExpr.weighted_sum(
            [x[gi, s] for s, _ in g.options], [s for s, _ in g.options]
        )
        for gi, g in enumerate(groups)
    ]

    def lex(chunk: range) -> cp_model.LinearExpr:
        weights = [n_slots ** (chunk.stop - 1 - gi) for gi in chunk]
        return cp_model.LinearExpr.weighted_sum([slot_expr[gi] for gi in chunk], weights)

    # Stage 1: minimum cost; the first tie-break chunk is folded in when it fits in 50 bits.
    n_fold = _fit_width(bound + 1, n_slots, len(groups)) if canonical else 0
    folded = range(n_fold) if n_fold else None
    radix = n_slots**n_fold
    chunks = _lex_chunks(n_fold, len(groups), n_slots) if canonical else []
    model.minimize(cost * radix + lex(folded) if folded is not None else cost)
    solver = cp_solver()
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE:
        return None
    if status != cp_model.OPTIMAL:
        raise RuntimeError(f"CP-SAT returned {solver.status_name(status)} without a time limit")
    chosen = [int(solver.value(e)) for e in slot_expr]
    if not canonical:
        return _solution(calendars, groups, chosen)

    # Stage 2: fix the cost (and the folded chunk), then the remaining chunks in order.
    best = round(solver.objective_value)
    if cost_terms:
        model.add(cost == (best // radix if folded is not None else best))
    for gi in folded or ():
        model.add(slot_expr[gi] == chosen[gi])
    for chunk in chunks:
        model.clear_hints()  # type: ignore[no-untyped-call]
        for gi, g in enumerate(groups):
            for s, _ in g.options:
                model.add_hint(x[gi, s], s == chosen[gi])
        model.minimize(lex(chunk))
        if solver.solve(model) != cp_model.OPTIMAL:
            raise RuntimeError("CP-SAT lost optimality during the tie-break")
        chosen = [int(solver.value(e)) for e in slot_expr]
        for gi in chunk:
            model.add(slot_expr[gi] == chosen[gi])
    return _solution(calendars, groups, chosen)


def _solution(
    calendars: Sequence[Calendar], groups: Sequence[_Group], chosen: Sequence[int]
) -> Solution:
    per_agent = [0] * len(calendars)
    assignments: dict[int, int] = {}
    prior_moves: dict[int, int] = {}
    for g, s in zip(groups, chosen, strict=True):
        for p in g.participants:
            item = calendars[p].slots[s]
            if isinstance(item, Errand):
                per_agent[p] += item.cost
        if g.origin is None:
            assignments[g.meeting_id] = s
        elif s != g.origin:
            prior_moves[g.meeting_id] = s
            for p, move_cost in zip(g.participants, g.move_costs, strict=True):
                per_agent[p] += move_cost
    return Solution(sum(per_agent), assignments, tuple(per_agent), prior_moves)


def _dump(solution: Solution | None) -> object:
    if solution is None:
        return None
    return [solution.cost, list(solution.assignments.items()), list(solution.per_agent_cost),
            list(solution.prior_moves.items())]


def _load(data: Any) -> Solution | None:
    if data is None:
        return None
    cost, assignments, per_agent, moves = data
    return Solution(int(cost), {int(m): int(s) for m, s in assignments},
                    tuple(int(c) for c in per_agent), {int(m): int(s) for m, s in moves})


_DISK: DiskCache[Solution | None] = DiskCache("solution", SOLVER_VERSION, __file__, _dump, _load)


def solve_greedy(calendars: Sequence[Calendar], meetings: Sequence[Meeting]) -> GreedySolution:
    """The myopic baseline described in the module docstring."""
    check_calendars(calendars)
    cals = list(calendars)
    per_agent = [0] * len(cals)
    assignments: dict[int, int] = {}
    for m in meetings:
        best: tuple[int, int] | None = None
        for s in range(cals[0].num_slots):
            c = _greedy_cost(cals, m, s)
            if c is not None and (best is None or c < best[0]):
                best = (c, s)
        if best is None:
            return GreedySolution(None, assignments, tuple(per_agent), m.meeting_id)
        slot = best[1]
        for p in m.participants:
            cal = cals[p]
            item = cal.slots[slot]
            batch: list[Reschedule | Schedule] = []
            if isinstance(item, Errand):
                landing = next(f for f in cal.free_slots() if f != slot)
                batch.append(Reschedule(item.errand_id, slot, landing, "greedy baseline"))
            batch.append(Schedule(m.meeting_id, slot))
            result = apply_batch(cal, batch, meeting=m)
            cals[p] = result.calendar
            per_agent[p] += result.cost
        assignments[m.meeting_id] = slot
    return GreedySolution(sum(per_agent), assignments, tuple(per_agent), None)


def _greedy_cost(cals: Sequence[Calendar], m: Meeting, slot: int) -> int | None:
    total = 0
    for p in m.participants:
        item = cals[p].slots[slot]
        if item is None:
            continue
        if isinstance(item, MeetingItem) or item.blocked or not cals[p].free_slots():
            return None
        total += item.cost
    return total
