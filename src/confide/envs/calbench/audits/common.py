"""What every CalBench audit reads.

A `GameRecord` joins one complete trace with its scenario and the lineup bound to its
seats (from the trace header), so every audit is a pure function of (scenario, trace).
Scenarios of a run directory are found through its resolved `experiment.yaml` (the suite
or task file the run used, loaded by the benchmark's own task loader).

Audit tables are written by `privacy.outputs.write_table` (the conventions of the F.5
tables), rows in a deterministic order, so two runs of a deterministic lineup give
byte-identical files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confide.core.benchmark import SeatSpec, expand_lineup
from confide.core.trace import Trace
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.privacy.outputs import trace_scenario
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError
from confide.untrusted import InputError, load_yaml

EXPERIMENT_FILE = "experiment.yaml"
ALL = "all"
"""The pooled group in summaries (every participant, or every cost setting)."""


class AuditError(ConfideError):
    """A run directory or trace cannot be audited (missing scenario, bad experiment file)."""


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

    def pools(self, agent: int) -> list[tuple[str, str]]:
        """The (participant, cost setting) summary groups agent `agent`'s seat belongs to."""
        spec = self.participants[agent]
        return [(p, s) for p in (spec, ALL) for s in (self.cost_setting, ALL)]

    def footer_rows(self) -> dict[int, dict[str, Any]]:
        """The per-agent result rows stored in the trace footer (agent -> row)."""
        rows = self.trace.footer.rows if self.trace.footer is not None else []
        return {int(r["agent"]): r for r in rows if "agent" in r}


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


def game_records(
    traces: Iterable[Trace], scenarios_by_id: Mapping[str, Scenario]
) -> list[GameRecord]:
    """Records of `traces` in (game id, trace path) order."""
    records = [game_record(t, scenarios_by_id) for t in traces]
    return sorted(records, key=lambda g: (g.game_id, g.trace.path))


def run_scenarios(run_dir: Path) -> dict[str, Scenario]:
    """Task id -> scenario for the suite or task file named in the run's experiment.yaml."""
    from confide.envs.calbench.env import load_tasks  # env imports the audits' users

    path = run_dir / EXPERIMENT_FILE
    try:
        data = load_yaml(path, "experiment file")
    except InputError as exc:
        raise AuditError(str(exc)) from None
    if not isinstance(data, dict):
        raise AuditError(f"{path}: expected a mapping of experiment fields")
    suite, tasks = data.get("suite"), data.get("tasks")
    return {s.task_id: s for s in load_tasks(suite, tasks)}
