"""Per-agent oracle attribution that does not depend on the solver's tie-break
(the CalBench paper, section 4.2: e_{g,i} = c^real_{g,i} - c^oracle_{g,i}).

What the paper says and leaves open. Section 4.2 charges each agent its share
c^oracle_{g,i} of "the oracle", the CP-SAT minimum-cost placement of the scheduled
meetings, and the Table 1 caption measures fairness as |e_{g,i} - mean_j e_{g,j}|. It does
not say whose share it is when several optimal placements split the same total
differently between agents (a meeting with two jointly usable slots, each costing a
different participant one errand); a solver returns one of them by an accident of its
search, and on our suite that accident moves IMAP uniform fairness by a third.

What we chose. A division is a distinct per-agent cost vector of an optimal placement
(same model and charging as oracle.py: own displaced errands plus every moved prior
meeting the agent attends), counted once however many placements realize it. A
per-agent metric m(paid, o) (signed excess, excess, fairness) is reported as its mean
over the divisions: its expected value when the tied optimum is drawn uniformly among
the distinct divisions. It equals the paper's metric whenever the optimum is unique,
and it does not change when slots, meetings or agents are relabelled or when the solver
is seeded differently. Every one of these metrics depends on agent i's own share o_i
only (fairness through mean_j e_j = (sum paid - optimum) / N, the same for every
division), so `Divisions` keeps, per agent, its share in each division of the tie it
belongs to (`shares`), and the mean needs no other agent's value.

How it is computed, exactly at every size, with no solver (so no solver seed or
tie-break can show):

- The benchmark's tasks: a depth-first search over the meetings' placements (fewest
  options first, cheapest option first, pruned by the cheapest completion of the
  meetings left) visits every optimal placement and keeps the distinct vectors. On all
  216 public fixtures and the 90-task canonical suite, for every subset of their
  meetings and both cost scales, it needs fewer than `SEARCH_NODES` nodes.
- Past `SEARCH_NODES` nodes (at N=50 agents the divisions of independent ties
  multiply: 2,304,000 on bench/calbench_scale.py's task) the problem is factored. With
  slack s = 0, 1, ... in turn, only options costing at most their meeting's cheapest
  plus s are kept (an optimum of total floor + s, floor being the sum of every
  meeting's cheapest option, uses no other), meetings left with one option are fixed
  and their cells taken from the others, and the rest split into independent ties: two
  meetings share a tie when some participant could use one slot in both, or both could
  charge one participant different amounts. Every cheapest placement is then a
  product of cheapest placements of the ties (exchanging one tie's placement between
  two of them keeps both feasible, so both stay cheapest), and each agent's cost
  varies in one tie at most, so the divisions of the whole are the product of the
  ties' divisions and an agent's shares are its costs over its own tie's divisions.
  A tie's divisions are counted, never listed (at N=50 one tie can have millions):
  first `least`, a dynamic program over its meetings in frontier order (state: the cells
  still contested by the meetings left) gives the tie's cheapest excess e over its
  meetings' cheapest options (searched only up to the slack, so it stays small); then a
  walk over the meetings keeps the partial placements (contested cells used, costs so
  far of the agents with meetings before and after, excess left) from which a
  completion of excess exactly e exists, and groups them into classes: the partial
  placements one sequence of finished agents' shares reaches (an agent is finished at
  its last meeting). Classes are the subset construction of that walk, so each
  distinct division is one path through them; a division's count through a transition
  is the prefixes reaching its class times the completions after it, which gives both
  the number of divisions and, per agent, how many give it each share (`shares` holds
  those counts; `mean` weighs by them). The first s whose cheapest total is at most
  floor + s gives the optimum (any placement outside the kept options costs more).
  Both ways give the same divisions (tests check the counts against brute force); with
  ties the factored mean may differ from an enumerated one in the last bit of float
  rounding (its sum runs over each agent's distinct shares instead of every division).
  On bench/calbench_scale.py's family every seed 0-29 at N=50 is counted in under 2
  CPU seconds, including seed 1, where the optimum is 4 over the floor and all 40
  meetings form one tie of 1,807 options (56,160 divisions). The walk's size is not
  bounded by theory: past `TIE_STATES` states and transitions a tie is refused with
  `AttributionTooHardError` naming its size, never left running.

Results are cached per (calendars, meetings).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.oracle import _Group, check_calendars, placement_groups
from confide.envs.calbench.world import Calendar, Errand, Meeting

Attribution = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Divisions:
    """The distinct optimal divisions of a placement problem, per agent (module
    docstring): `shares[i]` lists agent i's cost in the divisions of its own tie as
    (share, how many divisions give it) pairs, `count` is the number of distinct
    divisions of the whole problem, `optimum` its total."""

    optimum: int
    count: int
    shares: tuple[tuple[tuple[int, int], ...], ...]

    @classmethod
    def of(cls, vectors: Sequence[Attribution]) -> Divisions:
        """The divisions given as every distinct vector (sorted): each agent's shares in
        the vectors' order, once each (so means add up in that order)."""
        shares = tuple(tuple((v[a], 1) for v in vectors) for a in range(len(vectors[0])))
        return cls(sum(vectors[0]), len(vectors), shares)

    def mean(self, metric: Callable[[int, int], float]) -> list[float]:
        """Per agent i, the mean over the divisions of metric(i, o_i)."""
        out = []
        for agent, pairs in enumerate(self.shares):
            total = metric(agent, pairs[0][0]) * pairs[0][1]
            for value, weight in pairs[1:]:
                total += metric(agent, value) * weight
            out.append(total / sum(weight for _, weight in pairs))
        return out


@lru_cache(maxsize=4096)
def optimal_divisions(
    calendars: tuple[Calendar, ...], meetings: tuple[Meeting, ...]
) -> Divisions | None:
    """The divisions of an optimal placement of `meetings` (None when no placement
    exists)."""
    check_calendars(calendars)
    n = len(calendars)
    if not meetings:
        return Divisions(0, 1, (((0, 1),),) * n)
    groups = placement_groups(calendars, meetings)
    if groups is None:
        return None
    options = [_costed_options(calendars, g) for g in groups]
    found, bound = _search(groups, options, n)
    if found is not None:
        return Divisions.of(sorted(found)) if found else None
    return _factored(groups, options, n, bound)


SEARCH_NODES = 20_000
"""Search nodes after which `optimal_divisions` factors the problem instead (the
benchmark's largest problem needs fewer; N=50 gets there in a fraction of a second)."""

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
) -> tuple[set[Attribution] | None, int | None]:
    """Every distinct vector of an optimal placement by depth-first search (module
    docstring), empty when no placement exists, and the optimum; when the search
    passes SEARCH_NODES nodes, None and the cheapest total it had found (None if
    none). A node's used cells are one integer (bit p * width + slot), and an option
    adds only its nonzero costs: the fixtures' uniform ties visit thousands of nodes."""
    order = sorted(range(len(groups)), key=lambda i: (len(options[i]), i))
    rest = [0] * (len(order) + 1)
    for depth in range(len(order) - 1, -1, -1):
        rest[depth] = rest[depth + 1] + options[order[depth]][0][0]
    width = 1 + max(slot for opts in options for _, slot, _ in opts)
    levels = [
        [
            (cost, sum(1 << (p * width + slot) for p in groups[i].participants),
             [(p, c) for p, c in zip(groups[i].participants, costs, strict=True) if c])
            for cost, slot, costs in options[i]
        ]
        for i in order
    ]
    last = len(levels)
    paid = [0] * n
    best: float = float("inf")
    found: set[Attribution] = set()
    nodes = 0

    def visit(depth: int, total: int, used: int) -> bool:
        nonlocal best, nodes
        nodes += 1
        if nodes > SEARCH_NODES:
            return False
        if depth == last:
            if total < best:
                best = total
                found.clear()
            found.add(tuple(paid))
            return True
        after = rest[depth + 1]
        for cost, cells, charged in levels[depth]:
            if total + cost + after > best:
                break  # options are cheapest first: the rest cost more still
            if used & cells:
                continue
            for p, c in charged:
                paid[p] += c
            complete = visit(depth + 1, total + cost, used | cells)
            for p, c in charged:
                paid[p] -= c
            if not complete:
                return False
        return True

    complete = visit(0, 0, 0)
    cheapest = int(best) if found else None
    return (found if complete else None), cheapest


def _factored(
    groups: Sequence[_Group], options: Sequence[list[_Option]], n: int, bound: int | None
) -> Divisions | None:
    """The divisions by independent ties (module docstring), None when no placement
    exists; `bound` is the total of some placement, if one is known. Slack 0, 1, ...
    in turn: the first whose placements' optimum is within it is the true optimum."""
    floor = sum(opts[0][0] for opts in options)
    top = sum(opts[-1][0] - opts[0][0] for opts in options) if bound is None else bound - floor
    for slack in range(top + 1):
        found = _factored_within(groups, options, n, slack)
        if found is not None and found.optimum <= floor + slack:
            return found
    return None


def _factored_within(
    groups: Sequence[_Group], options: Sequence[list[_Option]], n: int, slack: int
) -> Divisions | None:
    """The divisions of the cheapest placements that use only options within `slack`
    of their meeting's cheapest (None when there are none)."""
    kept = _fix(groups, [[o for o in opts if o[0] <= opts[0][0] + slack] for opts in options])
    if kept is None:
        return None
    shares: dict[int, tuple[tuple[int, int], ...]] = {}
    owner: dict[int, int] = {}  # varying agent -> its tie
    tie_of: dict[int, int] = {}  # meeting -> its tie
    count, total = 1, 0
    for t, tie in enumerate(_ties(groups, kept)):
        tie_groups, tie_options = [groups[i] for i in tie], [kept[i] for i in tie]
        varying = sorted(_charged_variably(tie_groups, tie_options))
        floors = [options[i][0][0] for i in tie]
        found = _tie_divisions(tie_groups, tie_options, floors, varying, slack)
        if found is None:
            return None
        count *= found[1]
        total += sum(floors) + found[0]
        tie_of.update(dict.fromkeys(tie, t))
        for a, hist in found[2].items():
            shares[a], owner[a] = tuple(sorted(hist.items())), t
    base = [0] * n  # charges that are the same in every optimum
    for i, (g, opts) in enumerate(zip(groups, kept, strict=True)):
        for k, p in enumerate(g.participants):
            if i not in tie_of or owner.get(p) != tie_of[i]:
                base[p] += opts[0][2][k]
    total += sum(opts[0][0] for i, opts in enumerate(kept) if i not in tie_of)
    return Divisions(
        total,
        count,
        tuple(tuple((base[a] + v, w) for v, w in shares.get(a, ((0, 1),))) for a in range(n)),
    )


def _charged_variably(groups: Sequence[_Group], options: Sequence[list[_Option]]) -> set[int]:
    """Participants some meeting of `groups` can charge different amounts."""
    return {
        p
        for g, opts in zip(groups, options, strict=True)
        for k, p in enumerate(g.participants)
        if len({o[2][k] for o in opts}) > 1
    }


def _fix(groups: Sequence[_Group], options: list[list[_Option]]) -> list[list[_Option]] | None:
    """Drop the options that use a cell of a meeting with one option left, until none
    does (such a meeting is at that slot in every placement); None when two such
    meetings need one cell or a meeting is left with no option."""
    while True:
        taken = [
            (p, opts[0][1])
            for g, opts in zip(groups, options, strict=True)
            if len(opts) == 1
            for p in g.participants
        ]
        cells = set(taken)
        if len(cells) < len(taken):
            return None
        changed = False
        for i, (g, opts) in enumerate(zip(groups, options, strict=True)):
            if len(opts) > 1:
                left = [o for o in opts if all((p, o[1]) not in cells for p in g.participants)]
                changed |= len(left) < len(opts)
                options[i] = left
        if not all(options):
            return None
        if not changed:
            return options


def _ties(groups: Sequence[_Group], options: Sequence[list[_Option]]) -> list[list[int]]:
    """The independent ties: meetings with two or more options, joined when a
    participant could use one slot in both or both could charge a participant
    differently (module docstring)."""
    parent = list(range(len(groups)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[int, int], int] = {}  # (agent, slot) cell or (agent, -1) charge
    for i, (g, opts) in enumerate(zip(groups, options, strict=True)):
        if len(opts) < 2:
            continue
        keys = [(p, o[1]) for o in opts for p in g.participants]
        keys += [(p, -1) for p in _charged_variably([g], [opts])]
        for key in keys:
            parent[root(i)] = root(first.setdefault(key, i))
    ties: dict[int, list[int]] = {}
    for i, opts in enumerate(options):
        if len(opts) > 1:
            ties.setdefault(root(i), []).append(i)
    return list(ties.values())


_Move = tuple[int, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]
"""One option in the dynamic program: excess over its meeting's cheapest, cells, and
(varying agent, charge) for each participant it charges."""

_Cells = frozenset[tuple[int, int]]
_State = tuple[_Cells, tuple[int, ...], int]
"""A partial placement as the rest of the tie sees it: the cells it holds that later
meetings could use, the open agents' costs so far, and the excess it may still spend."""

TIE_STATES = 1_000_000
"""Dynamic-program states and transitions after which a tie is refused
(`AttributionTooHardError`) rather than counted: a bound on time and memory (the N=50
seeds 0-29 of bench/calbench_scale.py's family need at most 100,000, seed 1 the most)."""


class AttributionTooHardError(CalendarDataError):
    """A tie of optimal divisions too large to count exactly within `TIE_STATES`."""


def _tie_divisions(
    groups: Sequence[_Group],
    options: Sequence[list[_Option]],
    floors: Sequence[int],
    varying: Sequence[int],
    slack: int,
) -> tuple[int, int, dict[int, dict[int, int]]] | None:
    """The distinct divisions of one tie's cheapest placements within `slack`: their
    excess, their number, and per varying agent how many have each share (module
    docstring); None when every placement exceeds `slack`."""
    order = _frontier_order(groups)
    agents = frozenset(varying)
    moves = [_moves(groups[i], options[i], floors[i], agents) for i in order]
    contested: list[_Cells] = [frozenset()] * (len(order) + 1)
    for depth in range(len(order) - 1, -1, -1):
        contested[depth] = contested[depth + 1] | {c for m in moves[depth] for c in m[1]}
    budget = [0]

    def spend(amount: int) -> None:
        budget[0] += amount
        if budget[0] > TIE_STATES:
            raise AttributionTooHardError(
                f"the optimal divisions of a tie of {len(groups)} meetings, "
                f"{sum(map(len, options))} placements and {len(varying)} agents need "
                f"more than {TIE_STATES:,} dynamic-program states to count exactly"
            )

    least = _least_completion(moves, contested, spend)
    cheapest = least(0, frozenset(), slack)
    if cheapest > slack:
        return None
    last = {a: d for d, i in enumerate(order) for a in groups[i].participants if a in agents}
    layers = _forward(moves, contested, last, least, cheapest, spend)
    return cheapest, *_marginals(layers, last)


def _moves(
    g: _Group, options: Sequence[_Option], floor: int, varying: frozenset[int]
) -> list[_Move]:
    return [
        (
            cost - floor,
            tuple((p, slot) for p in g.participants),
            tuple((p, c) for p, c in zip(g.participants, costs, strict=True) if p in varying),
        )
        for cost, slot, costs in options
    ]


def _least_completion(
    moves: Sequence[list[_Move]], contested: Sequence[_Cells], spend: Callable[[int], None]
) -> Callable[[int, _Cells, int], int]:
    """least(depth, used, cap): the cheapest excess of the meetings from `depth` on,
    given the contested cells already used, when it is at most `cap`; else cap + 1
    (memoized with the cap it was sought under, so a larger cap searches again)."""
    memo: dict[tuple[int, _Cells], tuple[int, bool]] = {}

    def least(depth: int, used: _Cells, cap: int) -> int:
        if depth == len(moves):
            return 0
        key = (depth, used)
        if key in memo:
            value, exact = memo[key]
            if exact or value > cap:
                return min(value, cap + 1)
        spend(1)
        best = cap + 1
        for excess, cells, _ in moves[depth]:
            if excess >= best:
                break  # cheapest first
            if used.isdisjoint(cells):
                taken = used.union(cells) & contested[depth + 1]
                best = min(best, excess + least(depth + 1, taken, best - 1 - excess))
        memo[key] = (best, best <= cap)
        return best

    return least


_Layer = list[tuple[int, int, tuple[int, ...], int]]
"""One meeting's transitions between distinct-prefix classes: (class, count of its
prefixes, the shares of the agents whose last meeting this is, next class)."""


def _forward(
    moves: Sequence[list[_Move]],
    contested: Sequence[_Cells],
    last: dict[int, int],
    least: Callable[[int, _Cells, int], int],
    excess: int,
    spend: Callable[[int], None],
) -> list[_Layer]:
    """The determinized walk over the meetings (module docstring): a class is the set of
    partial placements reachable with one sequence of closed agents' shares, so distinct
    paths through the classes are distinct divisions."""
    opened: list[tuple[int, ...]] = []  # per depth: agents with a meeting before and after
    seen: set[int] = set()
    for depth in range(len(moves)):
        opened.append(tuple(sorted(a for a in seen if last[a] >= depth)))
        seen.update(a for _, _, charges in moves[depth] for a, _ in charges)
    opened.append(())
    classes: dict[frozenset[_State], int] = {frozenset({(frozenset(), (), excess)}): 1}
    layers: list[_Layer] = []
    for depth, options in enumerate(moves):
        closing = tuple(sorted(a for a, d in last.items() if d == depth))
        after = opened[depth + 1]
        nxt: dict[frozenset[_State], int] = {}
        ids: dict[frozenset[_State], int] = {}
        layer: _Layer = []
        for k, (states, count) in enumerate(classes.items()):
            by_label: dict[tuple[int, ...], set[_State]] = {}
            for used, sums, left in states:
                for cost, cells, charges in options:
                    if cost > left:
                        break
                    if not used.isdisjoint(cells):
                        continue
                    spend(1)
                    taken = used.union(cells) & contested[depth + 1]
                    if least(depth + 1, taken, left - cost) != left - cost:
                        continue  # no cheapest completion
                    paid = dict(zip(opened[depth], sums, strict=True))
                    for a, c in charges:
                        paid[a] = paid.get(a, 0) + c
                    label = tuple(paid.get(a, 0) for a in closing)
                    state = (taken, tuple(paid.get(a, 0) for a in after), left - cost)
                    by_label.setdefault(label, set()).add(state)
            for label, succ in by_label.items():
                key = frozenset(succ)
                target = ids.setdefault(key, len(ids))
                nxt[key] = nxt.get(key, 0) + count
                layer.append((k, count, label, target))
        layers.append(layer)
        classes = nxt
    return layers


def _marginals(
    layers: Sequence[_Layer], last: dict[int, int]
) -> tuple[int, dict[int, dict[int, int]]]:
    """The number of distinct divisions and, per agent, how many give it each share:
    divisions through a transition = its class's prefixes x the completions after it."""
    after = [1]  # completions per class of the final layer (one class: all placed)
    hist: dict[int, dict[int, int]] = {a: {} for a in last}
    for depth in range(len(layers) - 1, -1, -1):
        closing = tuple(sorted(a for a, d in last.items() if d == depth))
        before: dict[int, int] = {}
        for k, count, label, target in layers[depth]:
            through = count * after[target]
            before[k] = before.get(k, 0) + after[target]
            for a, value in zip(closing, label, strict=True):
                hist[a][value] = hist[a].get(value, 0) + through
        after = [before.get(k, 0) for k in range(max(before, default=-1) + 1)]
    return after[0], hist


def _frontier_order(groups: Sequence[_Group]) -> list[int]:
    """Meetings in an order where each next one shares the most participants with
    those already placed (ties: lowest index)."""
    left = list(range(len(groups)))
    placed: set[int] = set()
    order: list[int] = []
    while left:
        nxt = max(left, key=lambda i: (len(placed.intersection(groups[i].participants)), -i))
        left.remove(nxt)
        order.append(nxt)
        placed.update(groups[nxt].participants)
    return order


def excess_shares(paid: Sequence[int], divisions: Divisions) -> list[float]:
    """Per agent, max(0, e_i) averaged over the divisions (section 4.2, C_i)."""
    return divisions.mean(lambda a, o: max(0.0, float(paid[a] - o)))


def fairness_shares(paid: Sequence[int], divisions: Divisions) -> list[float]:
    """Per agent, |e_i - mean_j e_j| averaged over the divisions (Table 1 caption); the
    mean is the same in every division, (sum paid - optimum) / N."""
    mean = float(sum(paid) - divisions.optimum) / len(paid)
    return divisions.mean(lambda a, o: abs(float(paid[a] - o) - mean))


def signed_excess(paid: Sequence[int], oracle: Sequence[int]) -> list[float]:
    """e_i = c^real_i - c^oracle_i (section 4.2) against one division."""
    return [float(p - o) for p, o in zip(paid, oracle, strict=True)]


def excess(paid: Sequence[int], oracle: Sequence[int]) -> list[float]:
    """max(0, e_i) (section 4.2, C_i) against one division."""
    return [max(0.0, e) for e in signed_excess(paid, oracle)]


def fairness(paid: Sequence[int], oracle: Sequence[int]) -> list[float]:
    """|e_i - mean_j e_j| over all agents of the game (Table 1 caption) against one
    division."""
    signed = signed_excess(paid, oracle)
    mean = sum(signed) / len(signed)
    return [abs(e - mean) for e in signed]
