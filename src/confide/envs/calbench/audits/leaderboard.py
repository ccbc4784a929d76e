"""The per-seat columns the OpenSkill leaderboard reads from results.csv (the CalBench paper
D.4 "Score-margin updates", F.3; confide.envs.calbench.rating.results).

- `game_id`: the episode id (unique within a run).
- `is_reference`: the seat is a reference protocol, not a model or a user's own agent.
- `coordination`: the seat's scheduled-meeting ratio S = M_sched / M (metrics.py);
  None for a seat that attends no meeting (it has nothing to coordinate).
- `excess_cost`: max(0, c_real - c_oracle) on the cost scale the agents were shown
  (D.4: varied errands stay at 1/10/100 for the rating update, unlike the 1/2/3 metric
  scale of Table 1): the display costs of the seat's committed moves minus its share of
  the scheduled-only CP-SAT oracle solved on display costs (averaged over the oracle's
  tied divisions, as every per-agent metric is: attribution.py).
- `excess_vps`: for a model seat the reflection-calibrated excess VPS of the seat as a
  target (F.3, `excess_calibrated_vps_loss_total`), None when the game recorded no
  reflection; for a reference seat the protocol-semantic excess VPS (vps.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from confide.core.benchmark import SeatSpec
from confide.envs.calbench.actions import agent_of, seat_of
from confide.envs.calbench.attribution import excess_shares, optimal_divisions
from confide.envs.calbench.audits.analyses import scheduled_ids
from confide.envs.calbench.events import BatchApplied
from confide.envs.calbench.kinds import of_kind
from confide.envs.calbench.metrics import scaled_calendars
from confide.envs.calbench.participants import REFERENCE_NAMES
from confide.envs.calbench.privacy.reflection import has_reflections, reflection_vps
from confide.envs.calbench.privacy.vps import excess_vps_by_seat
from confide.envs.calbench.scenario import Scenario

COLUMNS = ("game_id", "is_reference", "coordination", "excess_cost", "excess_vps")


def display_excess(scenario: Scenario, events: Sequence[object]) -> list[float]:
    """Per agent: max(0, displayed cost paid - displayed scheduled-only oracle share)."""
    paid = [0] * scenario.num_agents
    for e in of_kind(events, BatchApplied):
        if e.seat:
            paid[agent_of(e.seat)] += e.data.display_cost
    done = scheduled_ids(events)
    meetings = tuple(m for m in scenario.to_meetings() if m.meeting_id in done)
    calendars = scaled_calendars(scenario, scenario.cost_display or None)
    oracle = optimal_divisions(calendars, meetings)
    if oracle is None:
        raise ValueError(f"{scenario.task_id}: the scheduled meetings admit no oracle placement")
    return excess_shares(paid, oracle)


def leaderboard_columns(
    scenario: Scenario,
    events: Sequence[object],
    success: Mapping[int, float | None],
    binding: Mapping[str, SeatSpec],
    game_id: str,
    protocol: Mapping[str, float] | None = None,
) -> dict[int, dict[str, Any]]:
    """Agent -> the leaderboard columns (module docstring); `success` is S per agent;
    `protocol`: each seat's protocol-semantic excess VPS, when its scorer has the game's
    VPS rows already (`GameVps.excess_by_seat`)."""
    excess = display_excess(scenario, events)
    if protocol is None:
        protocol = excess_vps_by_seat(scenario, events, game_id=game_id)
    reflected = (
        reflection_vps(scenario, events, game_id=game_id).excess_by_seat()
        if has_reflections(events) else {}
    )
    out = {}
    for agent in range(scenario.num_agents):
        seat = seat_of(agent)
        reference = binding[seat].raw in REFERENCE_NAMES
        out[agent] = {
            "game_id": game_id,
            "is_reference": reference,
            "coordination": success.get(agent),
            "excess_cost": excess[agent],
            "excess_vps": protocol[seat] if reference else reflected.get(seat),
        }
    return out
