"""Per-agent oracle attribution that does not depend on the solver's tie-break
(calbench.md section 4.2: e_{g,i} = c^real_{g,i} - c^oracle_{g,i}; issue 14).

Section 4.2 charges each agent its share c^oracle_{g,i} of "the oracle", the minimum-cost
placement of the scheduled meetings. Many tasks have several optimal placements that
split the same total differently between agents (a meeting with two jointly usable
slots, each costing a different participant one errand), and which of them a solver
returns is an accident of its search. The per-agent metrics are therefore defined over
all of them:

- `optimal_attributions(calendars, meetings)`: every distinct per-agent cost vector of an
  optimal placement (same model and per-agent charging as oracle.py: own displaced
  errands plus every moved prior meeting the agent attends), sorted; each vector is one
  way the optimum can be divided, counted once however many placements realize it.
- A per-agent metric m(paid, o) (signed excess, excess, fairness) is reported as its mean
  over those vectors: the expected value of the paper's metric when the tied optimum is
  drawn uniformly among the distinct divisions. It does not change when slots or agents
  are relabelled, and it equals the paper's metric whenever the optimum is unique.

Enumeration: a depth-first search over the meetings' placements (fewest options first,
cheapest option first, pruned by the cheapest completion of the meetings left) finds
every optimal placement and keeps its vector. On the benchmark's task sizes it visits a
few hundred nodes, where CP-SAT needed one solve per vector plus two (a run scores every
game against the oracle of its own scheduled meetings, so this was most of a run's CPU
time). When the search passes `SEARCH_NODES` nodes (large tasks with many independent
ties), CP-SAT enumerates instead: one solve fixes the optimal total; each further solve
asks for a placement at that total whose vector differs from every vector found so far
(with equal totals a vector differs iff some agent pays more: one clause per vector
found), until none is left. Both return the same set, sorted, so the choice never shows.
Results are cached per (calendars, meetings).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal

from ortools.sat.python import cp_model

from confide.envs.calbench.oracle import _Group, check_calendars, cp_solver, placement_groups
from confide.envs.calbench.world import Calendar, Errand, Meeting

Attribution = tuple[int, ...]


@lru_cache(maxsize=4096)
def optimal_attributions(
    calendars: tuple[Calendar, ...], meetings: tuple[Meeting, ...]
) -> tuple[Attribution, ...] | None:
    """Every distinct per-agent cost vector of an optimal placement of `meetings`, sorted
    (None when no placement exists)."""
    check_calendars(calendars)
    n = len(calendars)
    if not meetings:
        return ((0,) * n,)
    groups = placement_groups(calendars, meetings)
    if groups is None:
        return None
    options = [_costed_options(calendars, g) for g in groups]
    searched = _search(groups, options, n)
    return searched if searched is not False else _enumerate_cpsat(groups, options, n)


SEARCH_NODES = 200_000
"""Search nodes after which `optimal_attributions` hands over to CP-SAT."""

_Option = tuple[int, int, tuple[int, ...]]
"""(total cost, slot, cost per participant in the group's order) of one placement."""


def _costed_options(calendars: Sequence[Calendar], g: _Group) -> list[_Option]:
    """A group's placements with what each costs every participant (own errand at the
    slot, plus the copy's move cost when a prior meeting leaves its slot), cheapest first."""
    out = []
    for slot, _ in g.options:
        costs = []
        for k, p in enumerate(g.participants):
            item = calendars[p].slots[slot]
            cost = item.cost if isinstance(item, Errand) else 0
            if g.origin is not None and slot != g.origin:
                cost += g.move_costs[k]
            costs.append(cost)
        out.append((sum(costs), slot, tuple(costs)))
    return sorted(out)


def _search(
    groups: Sequence[_Group], options: Sequence[list[_Option]], n: int
) -> tuple[Attribution, ...] | Literal[False] | None:
    """Every distinct vector of an optimal placement by depth-first search (module
    docstring): None when no placement exists, False when the search passed
    SEARCH_NODES nodes."""
    order = sorted(range(len(groups)), key=lambda i: (len(options[i]), i))
    rest = [0] * (len(order) + 1)
    for depth in range(len(order) - 1, -1, -1):
        rest[depth] = rest[depth + 1] + options[order[depth]][0][0]
    used: set[tuple[int, int]] = set()
    paid = [0] * n
    best = [float("inf")]
    found: set[Attribution] = set()
    nodes = [0]

    def visit(depth: int, total: int) -> bool:
        nodes[0] += 1
        if nodes[0] > SEARCH_NODES:
            return False
        if depth == len(order):
            if total < best[0]:
                best[0] = total
                found.clear()
            found.add(tuple(paid))
            return True
        g = groups[order[depth]]
        for cost, slot, costs in options[order[depth]]:
            if total + cost + rest[depth + 1] > best[0]:
                break  # options are cheapest first: the rest cost more still
            cells = [(p, slot) for p in g.participants]
            if any(c in used for c in cells):
                continue
            used.update(cells)
            for p, c in zip(g.participants, costs, strict=True):
                paid[p] += c
            complete = visit(depth + 1, total + cost)
            for p, c in zip(g.participants, costs, strict=True):
                paid[p] -= c
            used.difference_update(cells)
            if not complete:
                return False
        return True

    if not visit(0, 0):
        return False
    return tuple(sorted(found)) if found else None


def _enumerate_cpsat(
    groups: Sequence[_Group], options: Sequence[list[_Option]], n: int
) -> tuple[Attribution, ...] | None:
    """The same set as `_search`, by CP-SAT (module docstring)."""
    model = cp_model.CpModel()
    cells: dict[tuple[int, int], list[cp_model.IntVar]] = {}
    terms: list[list[cp_model.LinearExprT]] = [[] for _ in range(n)]
    for g, costed in zip(groups, options, strict=True):
        chosen = []
        for _, slot, costs in sorted(costed, key=lambda o: o[1]):
            var = model.new_bool_var(f"m{g.meeting_id}_s{slot}")
            chosen.append(var)
            for p, cost in zip(g.participants, costs, strict=True):
                if cost:
                    terms[p].append(cost * var)
                cells.setdefault((p, slot), []).append(var)
        model.add_exactly_one(chosen)
    for cell in cells.values():
        if len(cell) > 1:
            model.add_at_most_one(cell)
    paid = [cp_model.LinearExpr.sum(t) for t in terms]
    total = cp_model.LinearExpr.sum(paid)
    model.minimize(total)
    solver = cp_solver()
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE:
        return None
    if status != cp_model.OPTIMAL:
        raise RuntimeError(f"CP-SAT returned {solver.status_name(status)} without a time limit")
    model.add(total == round(solver.objective_value))
    model.clear_objective()  # type: ignore[no-untyped-call]
    found: list[Attribution] = []
    while status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        vector = tuple(int(solver.value(e)) for e in paid)
        found.append(vector)
        more = []
        for a, v in enumerate(vector):
            flag = model.new_bool_var(f"more{len(found)}_{a}")
            model.add(paid[a] >= v + 1).only_enforce_if(flag)
            more.append(flag)
        model.add_bool_or(more)
        status = solver.solve(model)
    return tuple(sorted(found))


def mean_over(
    attributions: Sequence[Attribution], metric: Callable[[Attribution], Sequence[float]]
) -> list[float]:
    """Per agent, the mean over `attributions` of `metric(attribution)`."""
    sums: list[float] = []
    for oracle in attributions:
        values = metric(oracle)
        sums = [a + b for a, b in zip(sums, values, strict=True)] if sums else list(values)
    return [x / len(attributions) for x in sums]


def signed_excess(paid: Sequence[int], oracle: Sequence[int]) -> list[float]:
    """e_i = c^real_i - c^oracle_i (section 4.2)."""
    return [float(p - o) for p, o in zip(paid, oracle, strict=True)]


def excess(paid: Sequence[int], oracle: Sequence[int]) -> list[float]:
    """max(0, e_i) (section 4.2, C_i)."""
    return [max(0.0, e) for e in signed_excess(paid, oracle)]


def fairness(paid: Sequence[int], oracle: Sequence[int]) -> list[float]:
    """|e_i - mean_j e_j| over all agents of the game (Table 1 caption)."""
    signed = signed_excess(paid, oracle)
    mean = sum(signed) / len(signed)
    return [abs(e - mean) for e in signed]
