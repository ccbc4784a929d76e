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

Enumeration: one CP-SAT solve fixes the optimal total; each further solve asks for a
placement at that total whose vector differs from every vector found so far (with equal
totals a vector differs iff some agent pays more: one clause per vector found), until
none is left. Results are cached per (calendars, meetings).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from ortools.sat.python import cp_model

from confide.envs.calbench.oracle import check_calendars, cp_solver, placement_groups
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
    model = cp_model.CpModel()
    cells: dict[tuple[int, int], list[cp_model.IntVar]] = {}
    terms: list[list[cp_model.LinearExprT]] = [[] for _ in range(n)]
    for g in groups:
        chosen = []
        for slot, _ in g.options:
            var = model.new_bool_var(f"m{g.meeting_id}_s{slot}")
            chosen.append(var)
            for k, p in enumerate(g.participants):
                item = calendars[p].slots[slot]
                cost = item.cost if isinstance(item, Errand) else 0
                if g.origin is not None and slot != g.origin:
                    cost += g.move_costs[k]
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
