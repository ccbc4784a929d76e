"""CalBench metrics: pure functions of (scenario, trace events, outcome) (the CalBench paper
section 4.2, Table 1 and Table 2 captions, A.6).

Per seat i of game g:

- M_{g,i}: incoming meetings i attends; M^sched_{g,i}: those scheduled. A meeting counts
  as scheduled when it was resolved in its round (A.4) and is still at one common slot on
  all its participants' calendars at the end of the game (a bumped meeting that was never
  repaired does not count).
- S_{g,i} = M^sched / M (undefined, reported as None, when M = 0).
- c^real_{g,i}: displacement cost i actually paid: the sum of the costs of every item it
  moved in committed batches (`batch_applied` events), VOLUNTARY and DECISION alike.
- c^oracle_{g,i}: i's share of the scheduled-only oracle: the CP-SAT minimum-cost
  placement of exactly the meetings that were scheduled, from the initial calendars (own
  displaced errands plus moved prior meetings it attends). When several optimal
  placements divide the optimum differently, every per-agent quantity below is the mean
  over the distinct divisions (attribution.py), so no metric depends on which tied
  optimum a solver returns; `cost_oracle` is the mean division and `oracle_divisions`
  (per game) their number.
- e_{g,i} = c^real - c^oracle (signed excess); C_{g,i} = max(0, e) (excess, §4.2);
  fairness_{g,i} = |e_{g,i} - mean_j e_{g,j}| over all seats of the game (Table 1
  caption); each averaged over the divisions as above.
- C^adj_{g,i} = (max(0, e) + m^miss * max(0, w - o)) / M with m^miss = M - M^sched,
  w_{g,i} = i's cost in the generator's hidden witness schedule and o_{g,i} = i's cost in
  the full-stream oracle (max(0, w - o) averaged over its divisions): every missed
  meeting is charged the witness's excess over the optimum (§4.2 defines
  Delta w = max(0, w - o) without defining w and o further; None when the scenario
  carries no witness or M = 0).
- N^msg_{g,i}: messages i sent (DMs and groupchat posts, one per post);
  E_{g,i} = N^msg / max(M^sched, 1).

Costs are measured on the internal scale (1/2/3 in the varied setting, "using the 1/2/3
varied-cost scale"). Tasks loaded from the public fixture files store the varied costs as
1/100/1000; those three values are mapped back to 1/2/3 before any cost is computed.

Per game: the success rate over participant-meetings, messages per successful
participant-meeting (total messages / scheduled participant-meetings), mean excess and
fairness over seats, total real and oracle costs, their ratio to the optimum and the greedy
baseline (A.6 "normalised cost"), and the count of consistency violations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from confide.core.trace import MessageDelivered
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.attribution import (
    Divisions,
    excess_shares,
    fairness_shares,
    optimal_divisions,
)
from confide.envs.calbench.engine.outcome import GameOutcome, consistent_slot
from confide.envs.calbench.events import BatchApplied, ConsistencyViolation
from confide.envs.calbench.kinds import of_kind
from confide.envs.calbench.oracle import solve_greedy
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.world import Calendar, Errand, Meeting, Slot

FIXTURE_VARIED_COSTS = {1: 1, 100: 2, 1000: 3}
"""Published varied-cost fixture values -> the internal 1/2/3 scale (section 3)."""


def metric_scale(scenario: Scenario) -> dict[int, int] | None:
    """The cost map onto the metric scale, or None when costs are already on it."""
    costs = {s.cost for row in scenario.calendars for s in row if s is not None}
    if scenario.published is not None and costs <= set(FIXTURE_VARIED_COSTS) and costs - {1}:
        return FIXTURE_VARIED_COSTS
    return None


def scaled_calendars(scenario: Scenario, scale: Mapping[int, int] | None) -> tuple[Calendar, ...]:
    """The initial calendars with every item cost on the metric scale."""
    calendars = scenario.to_calendars()
    if scale is None:
        return calendars
    return _scaled(calendars, tuple(sorted(scale.items())))


@lru_cache(maxsize=1024)
def _scaled(
    calendars: tuple[Calendar, ...], scale: tuple[tuple[int, int], ...]
) -> tuple[Calendar, ...]:
    """`scaled_calendars`, once per task and scale (each game's scoring asks for both)."""
    table = dict(scale)
    return tuple(
        Calendar(cal.owner, tuple(_rescale(item, table) for item in cal.slots)) for cal in calendars
    )


def _rescale(item: Slot, scale: Mapping[int, int]) -> Slot:
    return None if item is None else replace(item, cost=scale.get(item.cost, item.cost))


def witness_per_agent(scenario: Scenario, calendars: Sequence[Calendar]) -> tuple[int, ...] | None:
    """Per-agent errand cost of placing every meeting at its hidden witness slot."""
    if scenario.witness is None:
        return None
    costs = [0] * scenario.num_agents
    for meeting in scenario.meetings:
        slot = scenario.witness.assignments[meeting.meeting_id]
        for agent in meeting.participants:
            item = calendars[agent].slots[slot]
            if isinstance(item, Errand):
                costs[agent] += item.cost
    return tuple(costs)


def scheduled_meetings(scenario: Scenario, outcome: GameOutcome) -> set[int]:
    """Incoming meetings resolved in their round and consistent at the end of the game."""
    return {
        m.meeting_id
        for m in scenario.meetings
        if outcome.resolved.get(m.meeting_id)
        and consistent_slot(outcome.calendars, m.meeting_id, m.participants) is not None
    }


def paid_costs(
    events: Iterable[Any], num_agents: int, scale: Mapping[int, int] | None
) -> list[int]:
    """c^real per agent from the committed batches in the trace."""
    paid = [0] * num_agents
    for event in of_kind(list(events), BatchApplied):
        if event.seat:
            agent = agent_of(event.seat)
            for move in event.data.moves:
                cost = move.cost
                paid[agent] += scale.get(cost, cost) if scale else cost
    return paid


def messages_sent(events: Iterable[Any], num_agents: int) -> list[int]:
    """N^msg per agent: messages delivered by the postbox, by sender."""
    sent = [0] * num_agents
    for event in of_kind(list(events), MessageDelivered):
        sent[agent_of(event.message.sender)] += 1
    return sent


@dataclass(frozen=True)
class GameReport:
    """Metrics of one game: one row per agent (agent order) and the game summary."""

    rows: list[dict[str, Any]]
    game: dict[str, Any]


def evaluate(scenario: Scenario, events: Sequence[Any], outcome: GameOutcome) -> GameReport:
    """Every §4.2 metric for one game (definitions in the module docstring)."""
    n = scenario.num_agents
    scale = metric_scale(scenario)
    calendars = scaled_calendars(scenario, scale)
    meetings = scenario.to_meetings()
    scheduled = scheduled_meetings(scenario, outcome)
    done = tuple(m for m in meetings if m.meeting_id in scheduled)
    full = optimal_divisions(calendars, meetings)
    oracle = full if len(done) == len(meetings) else optimal_divisions(calendars, done)
    if oracle is None:
        raise ValueError(f"{scenario.task_id}: the scheduled meetings admit no oracle placement")
    witness = witness_per_agent(scenario, calendars)
    paid = paid_costs(events, n, scale)
    sent = messages_sent(events, n)
    attends = Counter(a for m in meetings for a in m.participants)
    done_by = Counter(a for m in done for a in m.participants)
    share = oracle.mean(lambda a, o: float(o))
    signed = oracle.mean(lambda a, o: float(paid[a] - o))
    over = excess_shares(paid, oracle)
    spread = fairness_shares(paid, oracle)
    missed_excess = _witness_excess(witness, full)
    rows = []
    for a in range(n):
        total, got = attends[a], done_by[a]
        adj = None
        if total and missed_excess is not None:
            adj = (over[a] + (total - got) * missed_excess[a]) / total
        rows.append(
            {
                "agent": a,
                "meetings": total,
                "scheduled": got,
                "success": got / total if total else None,
                "cost_real": paid[a],
                "cost_oracle": share[a],
                "signed_excess": signed[a],
                "excess": over[a],
                "fairness": spread[a],
                "adj_cost": adj,
                "messages": sent[a],
                "messages_per_meeting": sent[a] / max(got, 1),
            }
        )
    greedy = _greedy_cost(scenario, scale, calendars, meetings)
    summary = _game_summary(scenario, events, outcome, rows, full, greedy, done)
    summary["oracle_divisions"] = oracle.count
    return GameReport(rows, summary)


def _witness_excess(
    witness: Sequence[int] | None,
    full: Divisions | None,
) -> list[float] | None:
    """Per agent, max(0, w - o) averaged over the full-stream oracle's divisions."""
    if witness is None or full is None:
        return None
    return excess_shares(witness, full)


def _greedy_cost(
    scenario: Scenario,
    scale: Mapping[int, int] | None,
    calendars: tuple[Calendar, ...],
    meetings: tuple[Meeting, ...],
) -> int | None:
    if scale is None and scenario.greedy is not None:
        return scenario.greedy.cost
    return _greedy_total(calendars, meetings)


@lru_cache(maxsize=1024)
def _greedy_total(calendars: tuple[Calendar, ...], meetings: tuple[Meeting, ...]) -> int | None:
    """The greedy baseline's cost, once per task (it does not depend on the game)."""
    return solve_greedy(calendars, meetings).cost


def _game_summary(
    scenario: Scenario,
    events: Sequence[Any],
    outcome: GameOutcome,
    rows: list[dict[str, Any]],
    full: Divisions | None,
    greedy: int | None,
    done: tuple[Meeting, ...],
) -> dict[str, Any]:
    n = len(rows)
    participant_meetings = sum(r["meetings"] for r in rows)
    scheduled_pm = sum(r["scheduled"] for r in rows)
    real = sum(r["cost_real"] for r in rows)
    optimal = full.optimum if full is not None else None
    adj = [r["adj_cost"] for r in rows if r["adj_cost"] is not None]
    violations = len(of_kind(events, ConsistencyViolation))
    return {
        "meetings_total": len(scenario.meetings),
        "meetings_scheduled": len(done),
        "meetings_resolved": sum(1 for v in outcome.resolved.values() if v),
        "success": scheduled_pm / participant_meetings if participant_meetings else None,
        "excess_mean": sum(r["excess"] for r in rows) / n,
        "fairness_mean": sum(r["fairness"] for r in rows) / n,
        "adj_cost_mean": sum(adj) / len(adj) if adj else None,
        "messages_total": sum(r["messages"] for r in rows),
        "messages_per_meeting": sum(r["messages"] for r in rows) / max(scheduled_pm, 1),
        "cost_real": real,
        "cost_oracle_scheduled": sum(r["cost_oracle"] for r in rows),
        "cost_optimal": optimal,
        "cost_greedy": greedy,
        "cost_vs_optimal": real / optimal if optimal else None,
        "cost_vs_greedy": real / greedy if greedy else None,
        "consistency_violations": violations,
        "prior_meetings_moved": _prior_moves(events),
    }


def _prior_moves(events: Sequence[Any]) -> int:
    """Distinct (seat, meeting) copies of already scheduled meetings moved (G.4)."""
    moved = {
        (e.seat, m.item_id)
        for e in of_kind(events, BatchApplied)
        for m in e.data.moves
        if m.kind == "meeting"
    }
    return len(moved)


__all__ = [
    "FIXTURE_VARIED_COSTS",
    "GameReport",
    "evaluate",
    "messages_sent",
    "metric_scale",
    "paid_costs",
    "scaled_calendars",
    "scheduled_meetings",
    "witness_per_agent",
]
