"""What every CalBench audit reads.

A `GameRecord` joins one complete trace with its scenario and the lineup bound to its
seats (from the trace header), so every audit is a pure function of (scenario, trace).
A `GameTally` is what the cross-game summaries read of a game: its seats, footer rows and a
few counts of its events, without the events, so a run's tables are built in one pass over
its traces that holds one trace at a time (a 10,000-game run stays flat in memory).
Scenarios of a run directory are found through its resolved `experiment.yaml` (the suite
or task file the run used, loaded by the benchmark's own task loader).

Audit tables are written by `outputs.privacy.write_table` (the conventions of the F.5
tables), rows in a deterministic order, so two runs of a deterministic lineup give
byte-identical files.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from confide.core.benchmark import SeatSpec, expand_lineup
from confide.core.trace import MessageDelivered, Trace
from confide.envs.calbench.actions import agent_of, seat_of
from confide.envs.calbench.events import BatchApplied
from confide.envs.calbench.kinds import of_kind
from confide.envs.calbench.privacy.tables import trace_scenario
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError

ALL = "all"
"""The pooled group in summaries (every participant, or every cost setting)."""


class AuditError(ConfideError):
    """A run directory or trace cannot be audited (missing scenario, bad experiment file)."""


Pool = tuple[str, str]
"""A summary group: (participant or ALL, cost setting or ALL)."""
K = TypeVar("K", bound=Hashable)


def _pools(spec: str, cost_setting: str) -> list[Pool]:
    return [(p, s) for p in (spec, ALL) for s in (cost_setting, ALL)]


@dataclass(frozen=True)
class GameTally:
    """One game as the cross-game summaries see it (module docstring)."""

    game_id: str
    scenario: Scenario
    participants: tuple[str, ...]
    footer: dict[int, dict[str, Any]]
    """Agent -> its result row from the trace footer."""
    text_messages: tuple[int, ...]
    """Per agent: messages with text it sent."""
    sent_by_round: dict[tuple[int, int], int]
    """(agent, round) -> messages the agent sent in that round."""
    prior_moved: dict[int, int]
    """Agent -> distinct already scheduled meetings it moved in committed batches."""

    @property
    def cost_setting(self) -> str:
        return self.scenario.cost_setting

    def pools(self, agent: int) -> list[Pool]:
        """The summary groups agent `agent`'s seat belongs to."""
        return _pools(self.participants[agent], self.cost_setting)

    def footer_rows(self) -> dict[int, dict[str, Any]]:
        """The per-agent result rows stored in the trace footer (agent -> row)."""
        return self.footer


@dataclass(frozen=True)
class GameRecord:
    """One game: its trace, scenario, id and who sat where."""

    trace: Trace
    scenario: Scenario
    participants: tuple[str, ...]
    """Seat spec of each agent, in agent order."""
    references: tuple[bool, ...]
    """Whether each agent's seat is a reference protocol (not a model)."""

    @property
    def game_id(self) -> str:
        return self.trace.header.episode_id

    @property
    def events(self) -> list[Any]:
        return list(self.trace.events)

    @property
    def cost_setting(self) -> str:
        return self.scenario.cost_setting

    def pools(self, agent: int) -> list[Pool]:
        """The (participant, cost setting) summary groups agent `agent`'s seat belongs to."""
        return _pools(self.participants[agent], self.cost_setting)

    def footer_rows(self) -> dict[int, dict[str, Any]]:
        """The per-agent result rows stored in the trace footer (agent -> row)."""
        rows = self.trace.footer.rows if self.trace.footer is not None else []
        return {int(r["agent"]): r for r in rows if "agent" in r}

    def tally(self) -> GameTally:
        """This game without its events (module docstring)."""
        text = [0] * self.scenario.num_agents
        for e in of_kind(self.trace.events, MessageDelivered):
            if e.message.text:
                text[agent_of(e.message.sender)] += 1
        return GameTally(
            self.game_id, self.scenario, self.participants, self.footer_rows(), tuple(text),
            sent_by_round(self), prior_meetings_moved(self),
        )


def sent_by_round(game: GameRecord) -> dict[tuple[int, int], int]:
    """(agent, round) -> messages the agent sent in that round."""
    sent: dict[tuple[int, int], int] = {}
    for e in of_kind(game.trace.events, MessageDelivered):
        key = (agent_of(e.message.sender), e.message.round)
        sent[key] = sent.get(key, 0) + 1
    return sent


def prior_meetings_moved(game: GameRecord) -> dict[int, int]:
    """Agent -> distinct already scheduled meetings it moved in committed batches."""
    moved: dict[int, set[int]] = {a: set() for a in range(game.scenario.num_agents)}
    for e in of_kind(game.trace.events, BatchApplied):
        if e.seat:
            moved[agent_of(e.seat)].update(
                m.item_id for m in e.data.moves if m.kind == "meeting"
            )
    return {a: len(ids) for a, ids in moved.items()}


def game_record(trace: Trace, scenarios_by_id: Mapping[str, Scenario]) -> GameRecord:
    """Join a trace with its scenario and lineup; errors name the trace."""
    scenario = trace_scenario(trace, scenarios_by_id, AuditError)
    seats = [seat_of(a) for a in range(scenario.num_agents)]
    lineup = tuple(SeatSpec(s) for s in trace.header.lineup) or (SeatSpec("unknown"),)
    try:
        binding = expand_lineup(lineup, seats)
    except ValueError as exc:
        raise AuditError(f"{trace.path}: {exc}") from None
    specs = tuple(binding[s] for s in seats)
    return GameRecord(
        trace, scenario, tuple(s.raw for s in specs), tuple(not s.is_model for s in specs)
    )


def add_counts(into: dict[K, list[int]], other: Mapping[K, Sequence[int]]) -> None:
    """Add `other`'s counts to `into`'s, key by key (a key new to `into` is copied)."""
    for key, counts in other.items():
        mine = into.get(key)
        if mine is None:
            into[key] = list(counts)
        else:
            for i, count in enumerate(counts):
                mine[i] += count


def extend_arrays(into: dict[K, array[float]], other: Mapping[K, array[float]]) -> None:
    """Append `other`'s values to `into`'s, key by key (the order of merging is the
    order of the values, so means come out as from one pass)."""
    for key, values in other.items():
        mine = into.get(key)
        if mine is None:
            into[key] = array("d", values)
        else:
            mine.extend(values)
