"""Feasible-assignment fraction d and difficulty buckets (the CalBench paper §3, A.1 step 5).

d = F / (T! / (T-M)!), where F counts the injective maps of the M incoming meetings to
distinct slots that satisfy the oracle's feasibility constraints. As in the published
harness, assignments must use M distinct slots even when two meetings share no
participant. Constraints: every agent's items plus its meetings fit in its calendar
(otherwise F = 0), and meeting m may not sit at slot s when some participant has a
blocked errand there. A slot that already holds a scheduled meeting is also ruled out
(decision: d scores the task as given; moving a confirmed meeting is a renegotiation, not
an option of the difficulty count). Generated tasks hold no meetings initially, so this
only matters for hand-built tasks.

Exact counting without enumerating solutions. Let B be the "forbidden board" (pairs
(m, s) ruled out above) and r_k the number of ways to pick k of its pairs with distinct
meetings and distinct slots (its rook numbers). Inclusion-exclusion gives

    F = sum_k (-1)^k r_k (T-k)! / (T-M)!.

The r_k come from a dynamic program over slots whose state is the set of already matched
meetings, restricted to the "frontier" (meetings with forbidden slots both processed and
pending); slots are ordered greedily to keep the frontier small, and all r_k are carried
at once packed into one Python integer (coefficient k in bits [kW, (k+1)W), W the bits
of a bound on every coefficient, so no carries). The board is first split into
connected components (their rook polynomials multiply), and each is swept over its
slots or over its meetings (the transposed board has the same rook numbers), whichever
frontier is narrower: N=50,
T=96, M=40 with two blocked errands per agent needs 18 meetings where the sweep over
slots needs 23. Cost is O(T * 2^w * w) for frontier width w <= M: microseconds for the
16-slot, 5-meeting suites. Within a line's step, an item crossed for the last time is
summed away at once (its bit is read, never carried into a wider state) and an item
crossed by one line only gets no bit at all, and each coefficient gets only the bits
its largest possible value needs (`_field_bits`): the same numbers, and N=50 seed 2026
(frontier 18) counts in about 2.5 CPU seconds instead of 6-10; seed
1 of that family has frontier 21 and still takes about 30. When the width exceeds
`max_frontier` the count is refused with `DifficultyTooHardError` rather than attempted.

`count_feasible_cpsat` is the published harness's method (CP-SAT enumeration of every
solution); tests and bench/calbench_generate.py use it to cross-check the exact count.

Buckets: within one generator config cell, candidates are ranked by d (higher d = more
feasible assignments = easier; ties by candidate order) and split into equal-size
tertiles easy / medium / hard. A cell whose candidates all share one d (e.g. no blocked
errands, so d = 1.0 everywhere) is degenerate and is reported, never bucketed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.oracle import check_calendars, cp_solver, fits
from confide.envs.calbench.scenario import Bucket, DifficultyRecord
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem, Slot

MAX_FRONTIER = 22
BUCKETS: tuple[Bucket, ...] = ("easy", "medium", "hard")


class DifficultyTooHardError(CalendarDataError):
    """Exact counting would need more than 2^max_frontier DP states."""


@dataclass(frozen=True, slots=True)
class DifficultyScore:
    """F, the number of ordered distinct-slot assignments, and d = F / total."""

    feasible_count: int
    total_count: int

    @property
    def fraction(self) -> float:
        return self.feasible_count / self.total_count if self.total_count else 0.0

    def to_record(
        self, *, cell: str | None = None, bucket: Bucket | None = None
    ) -> DifficultyRecord:
        return DifficultyRecord(
            feasible_count=self.feasible_count,
            total_count=self.total_count,
            fraction=self.fraction,
            cell=cell,
            bucket=bucket,
        )


def rules_out(item: Slot) -> bool:
    """Whether an item at (agent, slot) rules the slot out for that agent's meetings."""
    return isinstance(item, MeetingItem) or (isinstance(item, Errand) and item.blocked)


def forbidden_slots(
    calendars: Sequence[Calendar], meetings: Sequence[Meeting]
) -> tuple[frozenset[int], ...] | None:
    """Per meeting, the slots it may not use; None when some agent is over capacity."""
    check_calendars(calendars)
    if not fits(calendars, meetings):
        return None
    ruled = [
        frozenset(s for s, item in enumerate(cal.slots) if rules_out(item)) for cal in calendars
    ]
    return tuple(frozenset().union(*(ruled[p] for p in m.participants)) for m in meetings)


def _line_order(
    lines: dict[int, tuple[int, ...]], pending: dict[int, int]
) -> tuple[list[int], int]:
    """Greedy order of the board's lines (slots, or meetings when transposed), each
    crossing the `lines[l]` items of the other side, and the frontier width."""
    pending = dict(pending)
    left = dict(lines)
    frontier: set[int] = set()
    order: list[int] = []
    width = 0
    while left:

        def cost(s: int) -> tuple[int, int, int]:
            ms = left[s]
            closes = sum(1 for m in ms if pending[m] == 1)
            opened = sum(1 for m in ms if m not in frontier)
            return (len(frontier) + opened - closes, opened, s)

        s = min(left, key=cost)
        ms = left.pop(s)
        frontier.update(ms)
        width = max(width, len(frontier))
        for m in ms:
            pending[m] -= 1
            if pending[m] == 0:
                frontier.discard(m)
        order.append(s)
    return order, width


def rook_numbers(
    num_slots: int, forbidden: Sequence[frozenset[int]], *, max_frontier: int = MAX_FRONTIER
) -> tuple[int, ...]:
    """r_0..r_M of the forbidden board (see module docstring).

    The board splits into connected components (meetings linked through shared forbidden
    slots); rooks in different components never attack each other, so the board's rook
    polynomial is the product of the components'. Each component is counted by the
    frontier DP over its slots or, transposed (rook numbers do not change when rows and
    columns swap), over its meetings, whichever keeps the frontier narrower: N=50 tasks
    with two blocked errands per agent need a frontier of about 23 meetings but 18 slots."""
    for m, slots in enumerate(forbidden):
        for s in slots:
            if not 0 <= s < num_slots:
                raise ValueError(f"forbidden slot {s} of meeting {m} is outside [0, {num_slots})")
    total = [1]
    for by_meeting in _components(forbidden):
        by_slot: dict[int, list[int]] = {}
        for m, slots in by_meeting.items():
            for s in sorted(slots):
                by_slot.setdefault(s, []).append(m)
        across = _oriented({s: tuple(ms) for s, ms in by_slot.items()})
        transposed = _oriented({m: tuple(sorted(slots)) for m, slots in by_meeting.items()})
        lines, pending, order, width = min(across, transposed, key=lambda o: o[3])
        if width > max_frontier:
            raise DifficultyTooHardError(
                f"exact count of feasible assignments needs frontier width {width} "
                f"(> max_frontier={max_frontier}, i.e. more than 2^{max_frontier} DP states)"
            )
        total = _times(total, _board_rooks(lines, pending, order))
    return tuple(total[k] if k < len(total) else 0 for k in range(len(forbidden) + 1))


_Oriented = tuple[dict[int, tuple[int, ...]], dict[int, int], list[int], int]
"""(lines, pending crossings per item, line order, frontier width)."""


def _oriented(lines: dict[int, tuple[int, ...]]) -> _Oriented:
    pending: dict[int, int] = {}
    for items in lines.values():
        for m in items:
            pending[m] = pending.get(m, 0) + 1
    order, width = _line_order(lines, pending)
    return lines, pending, order, width


def _components(forbidden: Sequence[frozenset[int]]) -> list[dict[int, frozenset[int]]]:
    """The board's connected components, each as meeting -> its forbidden slots (meetings
    with no forbidden slot form none: their rook polynomial is 1)."""
    parent = list(range(len(forbidden)))

    def root(m: int) -> int:
        while parent[m] != m:
            parent[m] = parent[parent[m]]
            m = parent[m]
        return m

    first: dict[int, int] = {}
    for m, slots in enumerate(forbidden):
        for s in slots:
            other = first.setdefault(s, m)
            parent[root(m)] = root(other)
    groups: dict[int, dict[int, frozenset[int]]] = {}
    for m, slots in enumerate(forbidden):
        if slots:
            groups.setdefault(root(m), {})[m] = slots
    return list(groups.values())


def _times(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The product of two polynomials given by their coefficients."""
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _board_rooks(
    lines: dict[int, tuple[int, ...]], pending: dict[int, int], order: Sequence[int]
) -> list[int]:
    """Rook numbers of one component by the frontier DP (module docstring), processing
    `lines` in `order`; the state is the set of frontier items already matched. An item
    crossed for the last time is summed away within its line's step (its bit is read,
    not carried), and an item crossed only once never gets a bit: a rook on it leaves
    the state as it is, so the frontier never holds them."""
    left = dict(pending)
    bits = _field_bits(lines, pending)
    states: dict[int, int] = {0: 1}
    bit_of: dict[int, int] = {}
    spare: list[int] = []
    next_bit = 0
    for line in order:
        closing: list[int] = []  # bits of frontier items crossed for the last time
        staying: list[int] = []  # bits of items crossed again later
        once = 0  # items crossed by this line only
        for m in lines[line]:
            left[m] -= 1
            if m in bit_of:
                (closing if left[m] == 0 else staying).append(1 << bit_of[m])
            elif left[m] == 0:
                once += 1
            else:
                if spare:
                    bit_of[m] = spare.pop()
                else:
                    bit_of[m], next_bit = next_bit, next_bit + 1
                staying.append(1 << bit_of[m])
        keep = ~sum(closing)
        new: dict[int, int] = {}
        for mask, poly in states.items():
            shifted = poly << bits
            base = mask & keep
            free = once + sum(1 for b in closing if not mask & b)
            new[base] = new.get(base, 0) + (poly + shifted * free if free else poly)
            for b in staying:
                if not mask & b:
                    new[base | b] = new.get(base | b, 0) + shifted
        states = new
        for m in lines[line]:
            if left[m] == 0 and m in bit_of:
                spare.append(bit_of.pop(m))
    packed = sum(states.values())
    field = (1 << bits) - 1
    size = min(len(lines), len(pending)) + 1
    return [(packed >> (k * bits)) & field for k in range(size)]


def _field_bits(lines: dict[int, tuple[int, ...]], pending: dict[int, int]) -> int:
    """Bits per packed coefficient: every coefficient of every state, and of their sum,
    counts partial rook placements of the lines processed so far, each line holding at
    most one rook and each item at most one, so it is at most the smaller of
    prod(1 + items of a line) and prod(1 + lines of an item)."""
    by_line = math.prod(1 + len(items) for items in lines.values())
    by_item = math.prod(1 + crossings for crossings in pending.values())
    return min(by_line, by_item).bit_length()


def count_injective_avoiding(
    num_slots: int, forbidden: Sequence[frozenset[int]], *, max_frontier: int = MAX_FRONTIER
) -> int:
    """Injective maps meetings -> slots with meeting m never on a slot of forbidden[m]."""
    n_meetings = len(forbidden)
    if n_meetings > num_slots:
        return 0
    rooks = rook_numbers(num_slots, forbidden, max_frontier=max_frontier)
    return sum(
        (-1) ** k * r * math.perm(num_slots - k, n_meetings - k) for k, r in enumerate(rooks)
    )


def feasible_fraction(
    calendars: Sequence[Calendar],
    meetings: Sequence[Meeting],
    *,
    max_frontier: int = MAX_FRONTIER,
) -> DifficultyScore:
    """d of §3 by exact counting."""
    n_slots = check_calendars(calendars)
    total = math.perm(n_slots, len(meetings))
    forbidden = forbidden_slots(calendars, meetings)
    if forbidden is None:
        return DifficultyScore(0, total)
    return DifficultyScore(
        count_injective_avoiding(n_slots, forbidden, max_frontier=max_frontier), total
    )


def count_feasible_cpsat(calendars: Sequence[Calendar], meetings: Sequence[Meeting]) -> int:
    """F by CP-SAT enumeration of all solutions (the published harness's method; slow:
    its time grows with F). Same constraints as `feasible_fraction`. OR-Tools is imported
    here, not with the module: its CP-SAT module imports pandas, over a second of every
    `confide run` that loads the CalBench suites."""
    from ortools.sat.python import cp_model

    class Counter(cp_model.CpSolverSolutionCallback):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def on_solution_callback(self) -> None:
            self.count += 1

    n_slots = check_calendars(calendars)
    if not fits(calendars, meetings):
        return 0
    model = cp_model.CpModel()
    by_slot: dict[int, list[cp_model.IntVar]] = {}
    for m in meetings:
        options = []
        for s in range(n_slots):
            if any(rules_out(calendars[p].slots[s]) for p in m.participants):
                continue
            var = model.new_bool_var(f"m{m.meeting_id}_s{s}")
            options.append(var)
            by_slot.setdefault(s, []).append(var)
        if not options:
            return 0
        model.add_exactly_one(options)
    for vars_at_slot in by_slot.values():
        model.add_at_most_one(vars_at_slot)
    solver = cp_solver()
    solver.parameters.enumerate_all_solutions = True
    counter = Counter()
    solver.solve(model, counter)
    return counter.count


@dataclass(frozen=True, slots=True)
class CellBuckets:
    """Tertile buckets of one config cell's candidates (None everywhere if degenerate)."""

    buckets: tuple[Bucket | None, ...]
    degenerate: bool
    distinct_values: int
    boundary_ties: int


def tertile_buckets(fractions: Sequence[float]) -> CellBuckets:
    """Rank candidates by d (descending, ties by index) and cut into three equal parts."""
    n = len(fractions)
    distinct = len(set(fractions))
    if n == 0 or distinct == 1:
        return CellBuckets((None,) * n, True, distinct, 0)
    order = sorted(range(n), key=lambda i: (-fractions[i], i))
    buckets: list[Bucket | None] = [None] * n
    for rank, i in enumerate(order):
        buckets[i] = BUCKETS[(3 * rank) // n]
    spans: dict[float, set[Bucket | None]] = {}
    for i, f in enumerate(fractions):
        spans.setdefault(f, set()).add(buckets[i])
    ties = sum(1 for group in spans.values() if len(group) > 1)
    return CellBuckets(tuple(buckets), False, distinct, ties)
