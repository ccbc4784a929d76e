"""The audit and model-VPS tables of a CalBench run directory (the `write_outputs` hook).

Always written (the CalBench paper, section 3, G.1-G.5):
semantic_leakage.csv, semantic_leakage_summary.csv, own_slot_disclosure.csv,
own_slot_disclosure_summary.csv, g1_completion_regret.csv, g2_first_speaker_units.csv,
g2_first_speaker_tests.csv, g3_messages_by_meeting.csv, g3_messages_by_speaker_role.csv,
g4_prior_meeting_reschedules.csv.

When some game recorded reflections (F.3): reflection_beliefs.csv (nonzero deltas),
reflection_pair_round_vps.csv, reflection_game_target_summary.csv.

When some game recorded judge cases (I.1-I.5): judge_cases.json, judge_beliefs.csv
(nonzero deltas with their calibration: I.1's judge_beliefs and judge_beliefs_calibrated in
one table), judge_pair_round_vps.csv, judge_game_target_summary.csv,
metric_comparison.csv, judge_precision_summary.csv, judge_vs_reflection_precision.csv,
judge_more_precise_than_reflection.csv, judge_reflection_cell_agreement.csv and
judge_reflection_agreement.csv (Table 17).

`write_calbench_tables` (the `write_tables` hook) writes the protocol-semantic F.5 tables
of outputs/privacy.py plus everything above, needing no scenario (its games were scored),
from what each game contributes to the tables (`ScoredGame`, audits/scored.py): computed
once, while the game is scored (`audits.measured`, from the events in memory), or from
its trace read back (`tables_of`, `write_calbench_outputs`), by the same function
(`scored_game`), so both give the same bytes. The games' `GameTables` are spooled to
disk (`GameSpool`) and read back once, a game at a time in (game id, trace path) order:
the summaries (G.1-G.4, leaks, disclosures) merge each game's counts, computed where the
game was scored (`GameSums`), and the G.2 units table copies each game's formatted
lines, so the run's process does no per-game analysis and memory stays flat however
many games a run has.
"""

from __future__ import annotations

import json
import pickle
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from confide import atomic
from confide.core.tables import SpooledTable
from confide.core.trace import Trace
from confide.envs.calbench.audits import analyses, own_slot, semantic
from confide.envs.calbench.audits.common import AuditError
from confide.envs.calbench.audits.scored import (
    UNIT_COLUMNS,
    GameSums,
    GameTables,
    ScoredGame,
    pickled,
    scored_game,
)
from confide.envs.calbench.env import load_tasks
from confide.envs.calbench.outputs.cohort import write_cohort_figures
from confide.envs.calbench.outputs.privacy import PrivacyTables, write_table
from confide.envs.calbench.privacy import agreement
from confide.envs.calbench.privacy.deltas import CellRow, ModelVps, PairRow, TargetRow
from confide.envs.calbench.privacy.tables import trace_scenario
from confide.envs.calbench.scenario import Scenario
from confide.untrusted import InputError, load_yaml

EXPERIMENT_FILE = "experiment.yaml"


class GameSpool:
    """The `GameTables` of a run's games, on disk: each game's is pickled to an anonymous
    file as soon as its trace is read, and read back one game at a time, in (game id,
    trace path) order, each time the spool is iterated; memory holds one game, each
    game's key and an array of file offsets."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._file = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 (closed by close)
        self._keys: list[tuple[str, str]] = []
        self._ends = array("q", [0])
        """Game i spans bytes _ends[i] to _ends[i + 1] of the file."""

    def add(self, game: GameTables) -> None:
        self.add_pickled(game.key, pickled(game))

    def add_pickled(self, key: tuple[str, str], data: bytes) -> None:
        """Add a game pickled already (`ScoredGame.tables`)."""
        self._file.seek(0, 2)
        self._file.write(data)
        self._keys.append(key)
        self._ends.append(self._file.tell())

    def __iter__(self) -> Iterator[GameTables]:
        for i in sorted(range(len(self._keys)), key=self._keys.__getitem__):
            self._file.seek(self._ends[i])
            game: GameTables = pickle.loads(self._file.read(self._ends[i + 1] - self._ends[i]))
            yield game

    def close(self) -> None:
        self._file.close()


def run_scenarios(run_dir: Path) -> dict[str, Scenario]:
    """Task id -> scenario for the suite or task file named in the run's experiment.yaml."""
    path = run_dir / EXPERIMENT_FILE
    try:
        data = load_yaml(path, "experiment file")
    except InputError as exc:
        raise AuditError(str(exc)) from None
    if not isinstance(data, dict):
        raise AuditError(f"{path}: expected a mapping of experiment fields")
    suite, tasks = data.get("suite"), data.get("tasks")
    return {s.task_id: s for s in load_tasks(suite, tasks)}


@contextmanager
def collect(
    root: Path, games: Iterable[ScoredGame], privacy: PrivacyTables | None = None
) -> Iterator[GameSpool]:
    """The tables of every game, one at a time (`GameSpool`); their F.5 lines go to
    `privacy`."""
    spool = GameSpool(root)
    try:
        for game in games:
            if privacy is not None:
                privacy.add_lines(game.key, game.privacy_lines())
            spool.add_pickled(game.key, game.tables)
        yield spool
    finally:
        spool.close()


def _scored(
    traces: Iterable[Trace], scenarios_by_id: Mapping[str, Scenario]
) -> Iterator[ScoredGame]:
    """`scored_game` of each trace (errors name the trace)."""
    for trace in traces:
        yield scored_game(trace, trace_scenario(trace, scenarios_by_id, AuditError))


def _model_tables(run_dir: Path, prefix: str, games: Sequence[ModelVps]) -> list[Path]:
    """A model's VPS tables (only games with reflections or judge answers: model runs)."""
    return [
        write_table(run_dir / f"{prefix}_beliefs.csv", CellRow,
                    [c for g in games for c in g.cells if c.delta != 0]),
        write_table(run_dir / f"{prefix}_pair_round_vps.csv", PairRow,
                    [p for g in games for p in g.pairs]),
        write_table(run_dir / f"{prefix}_game_target_summary.csv", TargetRow,
                    [t for g in games for t in g.targets]),
    ]


def _vps_outputs(run_dir: Path, games: Sequence[GameTables]) -> list[Path]:
    """The reflection and judge tables of the games with either (model games)."""
    reflected = [g.reflected for g in games if g.reflected is not None]
    judged_games = [g for g in games if g.judged is not None]
    judged = [g.judged for g in judged_games if g.judged is not None]
    written = _model_tables(run_dir, "reflection", reflected) if reflected else []
    if not judged:
        return written
    cases = run_dir / "judge_cases.json"
    atomic.write_text(
        cases, json.dumps([c for g in judged_games for c in g.judge_cases], indent=1) + "\n"
    )
    protocol = [g.judged_vps for g in judged_games if g.judged_vps is not None]
    precision = agreement.precision_rows(judged, reflected)
    cells = agreement.cell_agreement([c for g in judged for c in g.cells],
                                     [c for g in reflected for c in g.cells])
    return [
        *written, cases, *_model_tables(run_dir, "judge", judged),
        write_table(run_dir / "metric_comparison.csv", agreement.ComparisonRow,
                    [agreement.comparison(judged, reflected, protocol)]),
        write_table(run_dir / "judge_precision_summary.csv", agreement.PrecisionSummary,
                    [agreement.precision_summary(judged, reflected, precision)]),
        write_table(run_dir / "judge_vs_reflection_precision.csv", agreement.PrecisionRow,
                    precision),
        write_table(run_dir / "judge_more_precise_than_reflection.csv", agreement.PrecisionRow,
                    [r for r in precision if r.more_precise == "judge"]),
        write_table(run_dir / "judge_reflection_cell_agreement.csv",
                    agreement.CellAgreementRow, cells),
        write_table(run_dir / "judge_reflection_agreement.csv", agreement.AgreementStats,
                    [agreement.agreement_stats(cells)]),
    ]


def _tables(run_dir: Path, games: GameSpool) -> list[Path]:
    """The audit and model-VPS tables from one pass over the spooled games, which merges
    their summary counts (`GameSums`), gathers their audit rows, copies their G.2 unit
    lines and keeps the model games (with reflections or judge answers: reference
    protocols have neither, so what is kept grows with the model games only)."""
    sums = GameSums()
    leaks: list[semantic.LeakRow] = []
    disclosures: list[own_slot.DisclosureRow] = []
    models: list[GameTables] = []
    units = SpooledTable(run_dir / "g2_first_speaker_units.csv", UNIT_COLUMNS)
    try:
        for game in games:
            sums.merge(game.sums)
            leaks += game.leaks
            disclosures += game.disclosures
            units.add_lines(game.key, game.units)
            if game.reflected is not None or game.judged is not None:
                models.append(game)
    except BaseException:
        units.close(write=False)
        raise
    units.close()
    by_meeting, by_role = sums.messages.rows()
    return [
        write_table(run_dir / "semantic_leakage.csv", semantic.LeakRow, leaks),
        write_table(run_dir / "semantic_leakage_summary.csv", semantic.LeakSummaryRow,
                    sums.leaks.rows(leaks)),
        write_table(run_dir / "own_slot_disclosure.csv", own_slot.DisclosureRow, disclosures),
        write_table(run_dir / "own_slot_disclosure_summary.csv",
                    own_slot.DisclosureSummaryRow, sums.disclosures.rows(disclosures)),
        write_table(run_dir / "g1_completion_regret.csv", analyses.RegretRow,
                    sums.regret.rows()),
        units.path,
        write_table(run_dir / "g2_first_speaker_tests.csv", analyses.SpeakerTestRow,
                    sums.speakers.rows()),
        write_table(run_dir / "g3_messages_by_meeting.csv", analyses.MeetingMessagesRow,
                    by_meeting),
        write_table(run_dir / "g3_messages_by_speaker_role.csv", analyses.RoleMessagesRow,
                    by_role),
        write_table(run_dir / "g4_prior_meeting_reschedules.csv", analyses.RescheduleRow,
                    sums.reschedules.rows()),
        *_vps_outputs(run_dir, models),
    ]


def write_audit_outputs(
    run_dir: Path | str,
    traces: Iterable[Trace],
    scenarios_by_id: Mapping[str, Scenario] | None = None,
) -> list[Path]:
    """Write the audit and model-VPS tables (module docstring); returns the files."""
    root = Path(run_dir)
    scenarios = scenarios_by_id if scenarios_by_id is not None else run_scenarios(root)
    with collect(root, _scored(traces, scenarios)) as games:
        return _tables(root, games)


def write_calbench_outputs(run_dir: Path | str, traces: Iterable[Trace]) -> None:
    """Every CalBench table from the traces alone (`scored_game` of each, then as
    `write_calbench_tables`): for a run directory whose tables were not carried."""
    root = Path(run_dir)
    _write_tables(root, _scored(traces, run_scenarios(root)))


def write_calbench_tables(run_dir: Path, games: Mapping[str, ScoredGame]) -> None:
    """The CalBench `write_tables` hook: protocol-semantic VPS tables (F.5) and the
    tables of `write_audit_outputs`, from what each game's scorer computed."""
    _write_tables(run_dir, games.values())


def _write_tables(root: Path, games: Iterable[ScoredGame]) -> None:
    with ExitStack() as stack:
        with PrivacyTables(root) as privacy:  # the F.5 tables are written as it exits
            spool = stack.enter_context(collect(root, games, privacy))
        _tables(root, spool)
    write_cohort_figures(root)
