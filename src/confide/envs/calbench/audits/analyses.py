"""Trace analyses of the CalBench paper, appendix G: completion-conditioned regret (G.1),
first-speaker effects with paired tests and BH correction (G.2, Table 12), messages by
meeting index and speaker role (G.3), prior-meeting reschedules (G.4).

Summaries are per (participant, cost setting), with "all" pooling participants and/or
settings. Per-seat metrics come from the result rows stored in each trace's footer
(metrics.py), so the analyses use exactly the numbers of results.csv.

- G.1: seats with at least one meeting; full-completion seats are those with success 1.
  Nonzero regret: share of full-completion seats with excess > 0; mean excess per
  meeting: mean over full-completion seats of excess / scheduled meetings.
- G.2 unit: a participating agent-meeting. Its VPS is the round-level reflection-
  calibrated excess VPS of the agent as a target, max(0, calibrated VPS of the round over
  all observers - floor / rounds): the five-slot game floor spread evenly over the
  rounds (our reading of "round-level excess"; None when the game has no reflections).
  Its excess cost, for meetings that end up scheduled, is max(0, paid - oracle): what the
  agent paid in its committed DECISION batch of that round minus what the scheduled-only
  CP-SAT oracle charges the agent for that meeting (the item under the meeting's oracle
  slot on its initial calendar; for a prior meeting moved away, its move cost plus,
  recursively, what sits under the prior meeting's new slot), on the metric scale of
  metrics.py. Pairs: per agent-game, the mean over its first-speaker units minus the
  mean over its other units (agent-games with both). Test: two-sided paired t test on
  those differences (None with fewer than two pairs or zero spread). Family: per metric,
  every (participant group, setting) test, Benjamini-Hochberg adjusted together (with
  seven models and three settings that is the 24 tests behind the paper's q values).
- G.3: messages sent (postbox deliveries by sender) per seat-game at each meeting index
  (every seat, participant or not), and per participating agent-meeting by role: first
  speaker versus later speakers (pooled, as the paper does).
- G.4: distinct already scheduled meetings each seat moved in committed batches, averaged
  over seat-games.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

import numpy as np

from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.audits.common import (
    ALL,
    GameRecord,
    GameTally,
    Pool,
    add_counts,
    extend_arrays,
)
from confide.envs.calbench.events import BatchApplied, Resolution
from confide.envs.calbench.kinds import of_kind
from confide.envs.calbench.metrics import metric_scale, scaled_calendars
from confide.envs.calbench.oracle import solve_oracle
from confide.envs.calbench.privacy.reflection import has_reflections, reflection_vps
from confide.envs.calbench.privacy.vps import VPS_FLOOR
from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem

K = TypeVar("K", bound=Hashable)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


# -- G.1 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegretRow:
    """Table 11 (g1_completion_regret.csv)."""

    participant: str
    cost_setting: str
    seats: int
    full_completion_seats: int
    full_completion_share: float | None
    nonzero_regret_share: float | None
    mean_excess_per_meeting: float | None


@dataclass
class RegretSums:
    """G.1's counts of some games (per pool: seats, full-completion seats, those with
    excess > 0; and the full-completion seats' excess per meeting, in game order): one
    game's are computed where it is scored, a run's are its games' merged in order."""

    seats: dict[Pool, list[int]] = field(default_factory=dict)
    ratios: dict[Pool, array[float]] = field(default_factory=dict)

    def add(self, game: GameTally) -> RegretSums:
        for agent, row in game.footer_rows().items():
            if not row.get("meetings"):
                continue
            success, excess = float(row["success"]), float(row["excess"])
            for pool in game.pools(agent):
                counts = self.seats.setdefault(pool, [0, 0, 0])
                counts[0] += 1
                if success == 1.0:
                    counts[1] += 1
                    counts[2] += excess > 0
                    self.ratios.setdefault(pool, array("d")).append(
                        excess / int(row["scheduled"])
                    )
        return self

    def merge(self, other: RegretSums) -> None:
        add_counts(self.seats, other.seats)
        extend_arrays(self.ratios, other.ratios)

    def rows(self) -> list[RegretRow]:
        out = []
        for (spec, setting), (n, full, nonzero) in sorted(self.seats.items()):
            out.append(RegretRow(
                spec, setting, n, full, full / n if n else None,
                nonzero / full if full else None, _mean(self.ratios.get((spec, setting), ())),
            ))
        return out


def completion_regret(games: Iterable[GameTally]) -> list[RegretRow]:
    """G.1 per (participant, setting), in one pass that keeps per pool only counts and
    the full-completion seats' excess per meeting."""
    sums = RegretSums()
    for game in games:
        sums.add(game)
    return sums.rows()


# -- G.2 units -----------------------------------------------------------------------------


class SpeakerUnit(NamedTuple):
    """One participating agent-meeting (g2_first_speaker_units.csv). A named tuple, not a
    frozen dataclass: a game has one per participant-meeting, and the run's tables read
    each game's back from their spool ten times (a frozen dataclass is rebuilt with a
    call per field each time)."""

    game_id: str
    round: int
    meeting_id: int
    agent: int
    participant: str
    cost_setting: str
    first_speaker: bool
    scheduled: bool
    excess_vps: float | None
    excess_cost: float | None


def scheduled_ids(events: Sequence[object]) -> set[int]:
    """Meetings resolved in their round and not inconsistent after the last round."""
    resolutions = [e.data for e in of_kind(events, Resolution)]
    if not resolutions:
        return set()
    broken = set(resolutions[-1].consistency_violations)
    return {r.meeting_id for r in resolutions if r.resolved and r.meeting_id not in broken}


def _oracle(
    calendars: tuple[Calendar, ...], meetings: tuple[Meeting, ...]
) -> tuple[dict[int, int], dict[int, int]] | None:
    solution = solve_oracle(calendars, meetings)
    return None if solution is None else (solution.assignments, solution.prior_moves)


def _displaced(
    calendar: Calendar, slot: int, prior_moves: Mapping[int, int], seen: frozenset[int]
) -> int:
    """What the oracle charges `calendar`'s owner for whatever sits at `slot`."""
    item = calendar.slots[slot]
    if isinstance(item, Errand):
        return item.cost
    if isinstance(item, MeetingItem) and item.meeting_id in prior_moves:
        if item.meeting_id in seen:
            return 0
        moved = prior_moves[item.meeting_id]
        return item.cost + _displaced(calendar, moved, prior_moves, seen | {item.meeting_id})
    return 0


def oracle_meeting_costs(game: GameRecord, scheduled: set[int]) -> dict[tuple[int, int], int]:
    """(agent, meeting id) -> the scheduled-only oracle's charge to that agent-meeting."""
    scale = metric_scale(game.scenario)
    calendars = scaled_calendars(game.scenario, scale)
    done = tuple(m for m in game.scenario.to_meetings() if m.meeting_id in scheduled)
    solved = _oracle(calendars, done) if done else ({}, {})
    if solved is None:
        raise ValueError(f"{game.game_id}: the scheduled meetings admit no oracle placement")
    assignments, prior_moves = solved
    return {
        (a, m.meeting_id): _displaced(calendars[a], assignments[m.meeting_id], prior_moves,
                                      frozenset())
        for m in done
        for a in m.participants
    }


def decision_costs(game: GameRecord) -> dict[tuple[int, int], int]:
    """(agent, round) -> cost paid in committed DECISION batches, on the metric scale."""
    scale = metric_scale(game.scenario) or {}
    paid: dict[tuple[int, int], int] = {}
    for e in of_kind(game.trace.events, BatchApplied):
        if e.seat and e.round is not None and e.data.phase == "DECISION":
            key = (agent_of(e.seat), e.round)
            cost = sum(scale.get(m.cost, m.cost) for m in e.data.moves)
            paid[key] = paid.get(key, 0) + cost
    return paid


def speaker_units(game: GameRecord, floor: float = VPS_FLOOR) -> list[SpeakerUnit]:
    """Every participating agent-meeting of one game (module docstring)."""
    events = game.events
    scheduled = scheduled_ids(events)
    oracle = oracle_meeting_costs(game, scheduled)
    paid = decision_costs(game)
    rounds = len(game.scenario.meetings)
    vps = (
        reflection_vps(game.scenario, events, game_id=game.game_id).round_calibrated()
        if has_reflections(events) else None
    )
    units = []
    for rnd, meeting in enumerate(game.scenario.meetings):
        done = meeting.meeting_id in scheduled
        for agent in meeting.participants:
            excess_vps = None
            if vps is not None:
                excess_vps = max(0.0, vps.get((rnd, agent), 0.0) - floor / rounds)
            excess_cost = None
            if done:
                excess_cost = float(max(0, paid.get((agent, rnd), 0)
                                        - oracle[agent, meeting.meeting_id]))
            units.append(SpeakerUnit(
                game.game_id, rnd, meeting.meeting_id, agent, game.participants[agent],
                game.cost_setting, meeting.speaker_order[0] == agent, done, excess_vps,
                excess_cost,
            ))
    return units


# -- G.2 tests -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A two-sided paired t test of per-pair differences."""

    pairs: int
    mean_delta: float | None
    t_statistic: float | None
    p_value: float | None


def paired_t(differences: Sequence[float]) -> PairedTest:
    """Paired t test of mean(differences) = 0 (None when n < 2 or the spread is zero)."""
    n = len(differences)
    if n == 0:
        return PairedTest(0, None, None, None)
    mean = sum(differences) / n
    if n < 2:
        return PairedTest(n, mean, None, None)
    sd = float(np.std(differences, ddof=1))
    if sd == 0.0:
        return PairedTest(n, mean, None, None)
    t = mean / (sd / math.sqrt(n))
    return PairedTest(n, mean, t, 2.0 * t_sf(abs(t), n - 1))


def t_sf(t: float, df: int) -> float:
    """Student's t survival function: `scipy.stats.t.sf(t, df)` to the last bit, through
    the special function it calls (`stdtr(df, -t)`), since importing scipy.stats costs a
    reference run about a second and scipy.special a third of that."""
    from scipy.special import stdtr

    return float(stdtr(df, -t))


def first_minus_subsequent(units: Sequence[SpeakerUnit], metric: str) -> list[float]:
    """Per agent-game: mean first-speaker value minus mean later-speaker value."""
    groups: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    for u in units:
        value = getattr(u, metric)
        if value is None:
            continue
        first, later = groups.setdefault((u.game_id, u.agent), ([], []))
        (first if u.first_speaker else later).append(float(value))
    return [
        sum(f) / len(f) - sum(s) / len(s)
        for _, (f, s) in sorted(groups.items())
        if f and s
    ]


@dataclass(frozen=True, slots=True)
class SpeakerTestRow:
    """Table 12 (g2_first_speaker_tests.csv)."""

    metric: str
    participant: str
    cost_setting: str
    first_units: int
    subsequent_units: int
    mean_first: float | None
    mean_subsequent: float | None
    pairs: int
    mean_paired_delta: float | None
    t_statistic: float | None
    p_value: float | None
    q_value: float | None


METRICS = ("excess_vps", "excess_cost")


@dataclass
class _SpeakerPool:
    """One (participant, setting) pool of G.2 units for one metric: the first- and
    later-speaker values and the per agent-game differences, as compact arrays."""

    present: bool = False
    first: array[float] = field(default_factory=lambda: array("d"))
    later: array[float] = field(default_factory=lambda: array("d"))
    deltas: array[float] = field(default_factory=lambda: array("d"))


@dataclass
class SpeakerSums:
    """G.2's pools of some games' units (per metric and pool: `_SpeakerPool`), built
    from their units a game at a time, in game id order: one game's are computed where
    it is scored, a run's are its games' merged in order (`merge`), and `rows` runs the
    tests."""

    pools: dict[tuple[str, Pool], _SpeakerPool] = field(default_factory=dict)
    first_game: str | None = None
    last_game: str | None = None
    """The first and last game added (games come in increasing id order)."""

    def add(self, game_id: str, units: list[SpeakerUnit]) -> SpeakerSums:
        """One game's units (`first_minus_subsequent` per pool and agent, agents in
        order)."""
        self._follow(game_id, game_id)
        pools = self.pools
        for u in units:
            for pool in [(p, s) for p in (u.participant, ALL) for s in (u.cost_setting, ALL)]:
                for metric in METRICS:
                    acc = pools.get((metric, pool))
                    if acc is None:  # not setdefault: a pool is three arrays to build
                        acc = pools[metric, pool] = _SpeakerPool()
                    value = getattr(u, metric)
                    if value is not None:
                        acc.present = True
                        (acc.first if u.first_speaker else acc.later).append(float(value))
        members: dict[Pool, list[SpeakerUnit]] = {}
        for u in units:
            for pool in [(p, s) for p in (u.participant, ALL) for s in (u.cost_setting, ALL)]:
                members.setdefault(pool, []).append(u)
        for pool, mine in members.items():
            for metric in METRICS:
                pools[metric, pool].deltas.extend(first_minus_subsequent(mine, metric))
        return self

    def merge(self, other: SpeakerSums) -> None:
        """Add the games of `other`, whose ids all follow this one's."""
        if other.first_game is None or other.last_game is None:
            return
        self._follow(other.first_game, other.last_game)
        for key, acc in other.pools.items():
            mine = self.pools.get(key)
            if mine is None:
                mine = self.pools[key] = _SpeakerPool()
            mine.present = mine.present or acc.present
            mine.first.extend(acc.first)
            mine.later.extend(acc.later)
            mine.deltas.extend(acc.deltas)

    def _follow(self, first: str, last: str) -> None:
        """Games `first` to `last` come next; refused unless they follow the last one."""
        if self.last_game is not None and first <= self.last_game:
            raise ValueError(
                f"G.2 units out of order: game {first!r} after {self.last_game!r}"
            )
        if self.first_game is None:
            self.first_game = first
        self.last_game = last

    def rows(self) -> list[SpeakerTestRow]:
        """Paired tests per metric and pool, BH within metric."""
        from confide.stats import benjamini_hochberg  # scipy loads with the analysis only

        rows: list[SpeakerTestRow] = []
        for metric in METRICS:
            family = [
                (pool, acc, paired_t(acc.deltas))
                for (m, pool), acc in sorted(self.pools.items()) if m == metric and acc.present
            ]
            raw = {i: test.p_value for i, (_, _, test) in enumerate(family)
                   if test.p_value is not None}
            q = dict(zip(raw, map(float, benjamini_hochberg(list(raw.values()))), strict=True)
                     ) if raw else {}
            for i, ((spec, setting), acc, test) in enumerate(family):
                rows.append(SpeakerTestRow(
                    metric, spec, setting, len(acc.first), len(acc.later), _mean(acc.first),
                    _mean(acc.later), test.pairs, test.mean_delta, test.t_statistic,
                    test.p_value, q.get(i),
                ))
        return rows


def first_speaker_tests(units: Iterable[SpeakerUnit]) -> list[SpeakerTestRow]:
    """Paired tests per metric and (participant, setting) pool, BH within metric, from
    one pass over the units (a game's units adjacent, games in (game id) order, as
    `speaker_units` and the run's tables give them): a pool keeps its values, never its
    units."""
    sums = SpeakerSums()
    for game_id, game in itertools.groupby(units, key=lambda u: u.game_id):
        sums.add(game_id, list(game))
    return sums.rows()


# -- G.3 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MeetingMessagesRow:
    """Figure 7 (g3_messages_by_meeting.csv)."""

    participant: str
    cost_setting: str
    meeting_index: int
    seat_games: int
    mean_messages: float


@dataclass(frozen=True, slots=True)
class RoleMessagesRow:
    """Figure 8 (g3_messages_by_speaker_role.csv)."""

    participant: str
    cost_setting: str
    role: str
    agent_meetings: int
    mean_messages: float


@dataclass
class MessageSums:
    """G.3's groups of some games (per group a count and a total): one game's are
    computed where it is scored, a run's are its games' merged."""

    by_index: dict[tuple[str, str, int], list[int]] = field(default_factory=dict)
    by_role: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)

    def add(self, game: GameTally) -> MessageSums:
        by_index, by_role, sent = self.by_index, self.by_role, game.sent_by_round
        for rnd, meeting in enumerate(game.scenario.meetings):
            for agent in range(game.scenario.num_agents):
                count = sent.get((agent, rnd), 0)
                for spec, setting in game.pools(agent):
                    _tally(by_index, (spec, setting, rnd), count)
                    if agent in meeting.participants:
                        role = "first" if meeting.speaker_order[0] == agent else "subsequent"
                        _tally(by_role, (spec, setting, role), count)
        return self

    def merge(self, other: MessageSums) -> None:
        add_counts(self.by_index, other.by_index)
        add_counts(self.by_role, other.by_role)

    def rows(self) -> tuple[list[MeetingMessagesRow], list[RoleMessagesRow]]:
        return (
            [MeetingMessagesRow(*k, n, t / n) for k, (n, t) in sorted(self.by_index.items())],
            [RoleMessagesRow(*k, n, t / n) for k, (n, t) in sorted(self.by_role.items())],
        )


def messages_by_meeting(
    games: Iterable[GameTally],
) -> tuple[list[MeetingMessagesRow], list[RoleMessagesRow]]:
    """G.3: mean messages per seat-game by meeting index, and per participating
    agent-meeting by speaker role (one pass; per group a count and a total)."""
    sums = MessageSums()
    for game in games:
        sums.add(game)
    return sums.rows()


def _tally(groups: dict[K, list[int]], key: K, count: int) -> None:
    """Add one count to a group's [number of counts, their total]."""
    entry = groups.setdefault(key, [0, 0])
    entry[0] += 1
    entry[1] += count


# -- G.4 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RescheduleRow:
    """Figure 9 (g4_prior_meeting_reschedules.csv)."""

    participant: str
    cost_setting: str
    seat_games: int
    mean_prior_meetings_rescheduled: float
    share_with_any: float


@dataclass
class RescheduleSums:
    """G.4's counts of some games (per pool: seat-games, total, seat-games with any):
    one game's are computed where it is scored, a run's are its games' merged."""

    counts: dict[Pool, list[int]] = field(default_factory=dict)

    def add(self, game: GameTally) -> RescheduleSums:
        for agent, count in game.prior_moved.items():
            for pool in game.pools(agent):
                entry = self.counts.setdefault(pool, [0, 0, 0])
                entry[0] += 1
                entry[1] += count
                entry[2] += count > 0
        return self

    def merge(self, other: RescheduleSums) -> None:
        add_counts(self.counts, other.counts)

    def rows(self) -> list[RescheduleRow]:
        return [
            RescheduleRow(spec, setting, n, total / n, anyone / n)
            for (spec, setting), (n, total, anyone) in sorted(self.counts.items())
        ]


def prior_reschedules(games: Iterable[GameTally]) -> list[RescheduleRow]:
    """G.4 per (participant, setting), in one pass (per pool: seat-games, total, any)."""
    sums = RescheduleSums()
    for game in games:
        sums.add(game)
    return sums.rows()
