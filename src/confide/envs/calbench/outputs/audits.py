"""The audit and model-VPS tables of a CalBench run directory (the `write_outputs` hook).

Always written (calbench.md section 3, G.1-G.5):
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

`write_calbench_outputs` is the whole hook: the protocol-semantic F.5 tables of
outputs/privacy.py plus everything above, with scenarios found through experiment.yaml.
It reads each trace once and keeps only what the game contributes to the tables
(`GameTables`), so the traces of a run are never in memory together.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from confide import atomic
from confide.core.trace import Trace
from confide.envs.calbench.audits import analyses, own_slot, semantic
from confide.envs.calbench.audits.common import GameRecord, GameTally, game_record, run_scenarios
from confide.envs.calbench.outputs.privacy import PrivacyTables, write_table
from confide.envs.calbench.privacy import agreement, judge_vps, reflection
from confide.envs.calbench.privacy.deltas import CellRow, ModelVps, PairRow, TargetRow, answered
from confide.envs.calbench.privacy.vps import GameVps, vps_rows
from confide.envs.calbench.scenario import Scenario


@dataclass(frozen=True)
class GameTables:
    """What one game contributes to the run's tables, computed from its trace once."""

    tally: GameTally
    trace_path: str
    judged_vps: GameVps | None
    """The protocol VPS rows of a judged game (the judge is compared with them)."""
    leaks: list[semantic.LeakRow]
    disclosures: list[own_slot.DisclosureRow]
    units: list[analyses.SpeakerUnit]
    reflected: ModelVps | None
    judged: ModelVps | None
    judge_cases: list[dict[str, Any]]

    @property
    def key(self) -> tuple[str, str]:
        """Tables list games in (game id, trace path) order."""
        return self.tally.game_id, self.trace_path


def _judge_cases(game: GameRecord) -> list[dict[str, Any]]:
    return [
        {"game_id": game.game_id, "round": e.round, "observer_agent": e.data.observer,
         "judge": e.data.judge, "message_ids": e.data.message_ids,
         "ok": e.data.ok, "attempts": e.data.attempts, "error": e.data.error}
        for e in game.trace.of(judge_vps.EVENT)
    ]


def game_tables(
    trace: Trace, scenarios_by_id: Mapping[str, Scenario], privacy: PrivacyTables | None = None
) -> GameTables:
    """Every table row of one game (errors name the trace); its F.5 rows go to `privacy`."""
    game = game_record(trace, scenarios_by_id)
    events = game.events
    path, gid = trace.path, game.game_id
    judged = answered(events, judge_vps.EVENT)
    vps = vps_rows(game.scenario, events, trace_path=path, game_id=gid,
                   keep_evidence=privacy is not None)
    if privacy is not None:
        privacy.add(vps)
    return GameTables(
        tally=game.tally(),
        trace_path=path,
        judged_vps=replace(vps, evidence=[]) if judged else None,
        leaks=semantic.game_leaks(game),
        disclosures=own_slot.game_disclosures(game),
        units=analyses.speaker_units(game),
        reflected=reflection.reflection_vps(game.scenario, events, trace_path=path, game_id=gid)
        if answered(events, reflection.EVENT) else None,
        judged=judge_vps.judge_vps(game.scenario, events, trace_path=path, game_id=gid)
        if judged else None,
        judge_cases=_judge_cases(game) if judged else [],
    )


def collect(
    traces: Iterable[Trace],
    scenarios_by_id: Mapping[str, Scenario],
    privacy: PrivacyTables | None = None,
) -> list[GameTables]:
    """The tables of every game, one trace at a time, in (game id, trace path) order."""
    games = (game_tables(t, scenarios_by_id, privacy) for t in traces)
    return sorted(games, key=lambda g: g.key)


def _model_tables(run_dir: Path, prefix: str, games: Sequence[ModelVps]) -> list[Path]:
    return [
        write_table(run_dir / f"{prefix}_beliefs.csv", CellRow,
                    [c for g in games for c in g.cells if c.delta != 0]),
        write_table(run_dir / f"{prefix}_pair_round_vps.csv", PairRow,
                    [p for g in games for p in g.pairs]),
        write_table(run_dir / f"{prefix}_game_target_summary.csv", TargetRow,
                    [t for g in games for t in g.targets]),
    ]


def _vps_outputs(run_dir: Path, games: Sequence[GameTables]) -> list[Path]:
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


def _audit_outputs(run_dir: Path, games: Sequence[GameTables]) -> list[Path]:
    tallies = [g.tally for g in games]
    leaks = [r for g in games for r in g.leaks]
    disclosures = [r for g in games for r in g.disclosures]
    units = [u for g in games for u in g.units]
    by_meeting, by_role = analyses.messages_by_meeting(tallies)
    return [
        write_table(run_dir / "semantic_leakage.csv", semantic.LeakRow, leaks),
        write_table(run_dir / "semantic_leakage_summary.csv", semantic.LeakSummaryRow,
                    semantic.leak_summary(tallies, leaks)),
        write_table(run_dir / "own_slot_disclosure.csv", own_slot.DisclosureRow, disclosures),
        write_table(run_dir / "own_slot_disclosure_summary.csv",
                    own_slot.DisclosureSummaryRow,
                    own_slot.disclosure_summary(tallies, disclosures)),
        write_table(run_dir / "g1_completion_regret.csv", analyses.RegretRow,
                    analyses.completion_regret(tallies)),
        write_table(run_dir / "g2_first_speaker_units.csv", analyses.SpeakerUnit, units),
        write_table(run_dir / "g2_first_speaker_tests.csv", analyses.SpeakerTestRow,
                    analyses.first_speaker_tests(units)),
        write_table(run_dir / "g3_messages_by_meeting.csv", analyses.MeetingMessagesRow,
                    by_meeting),
        write_table(run_dir / "g3_messages_by_speaker_role.csv", analyses.RoleMessagesRow,
                    by_role),
        write_table(run_dir / "g4_prior_meeting_reschedules.csv", analyses.RescheduleRow,
                    analyses.prior_reschedules(tallies)),
    ]


def write_audit_outputs(
    run_dir: Path | str,
    traces: Iterable[Trace],
    scenarios_by_id: Mapping[str, Scenario] | None = None,
) -> list[Path]:
    """Write the audit and model-VPS tables (module docstring); returns the files."""
    root = Path(run_dir)
    scenarios = scenarios_by_id if scenarios_by_id is not None else run_scenarios(root)
    games = collect(traces, scenarios)
    root.mkdir(parents=True, exist_ok=True)
    return [*_audit_outputs(root, games), *_vps_outputs(root, games)]


def write_calbench_outputs(run_dir: Path | str, traces: Iterable[Trace]) -> None:
    """The CalBench `write_outputs` hook: protocol-semantic VPS tables (F.5) and the
    tables of `write_audit_outputs`, from one pass over the traces."""
    root = Path(run_dir)
    scenarios = run_scenarios(root)
    with PrivacyTables(root) as privacy:
        games = collect(traces, scenarios, privacy)
    _audit_outputs(root, games)
    _vps_outputs(root, games)
