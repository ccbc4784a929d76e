"""The four protocol-semantic VPS tables of a run directory (calbench.md F.5):
belief_evidence.csv, pair_round_vps.csv, game_summary.csv, game_target_summary.csv.

Columns are the fields of the row types in vps.py, in that order. `write_table` (also the
writer of every audit table) writes floats with six decimals, booleans as `true`/`false`
and None as an empty cell, so two runs of a deterministic lineup give byte-identical
files; games are written in (game id, trace path) order whatever order the runner
finished them in.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

from confide.core.trace import Trace
from confide.envs.calbench.privacy.vps import (
    EvidenceRow,
    GameRow,
    GameVps,
    PairRoundRow,
    TargetRow,
    VpsError,
    vps_rows,
)
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError

Row = EvidenceRow | PairRoundRow | GameRow | TargetRow

TABLES: dict[str, type[Row]] = {
    "belief_evidence.csv": EvidenceRow,
    "pair_round_vps.csv": PairRoundRow,
    "game_summary.csv": GameRow,
    "game_target_summary.csv": TargetRow,
}


def trace_scenario(
    trace: Trace,
    scenarios_by_id: Mapping[str, Scenario],
    error: type[ConfideError] = VpsError,
) -> Scenario:
    """The scenario named by the trace header; `error` names the trace when it is absent."""
    scenario = scenarios_by_id.get(trace.header.scenario_id)
    if scenario is None:
        raise error(
            f"{trace.path}: scenario {trace.header.scenario_id!r} is not among the "
            f"{len(scenarios_by_id)} scenarios given"
        )
    return scenario


def trace_vps(trace: Trace, scenarios_by_id: Mapping[str, Scenario]) -> GameVps:
    """The VPS rows of one trace, with its scenario looked up by the header's scenario id."""
    scenario = trace_scenario(trace, scenarios_by_id)
    return vps_rows(
        scenario, trace.events, trace_path=trace.path, game_id=trace.header.episode_id
    )


def write_privacy_outputs(
    run_dir: Path, traces: Iterable[Trace], scenarios_by_id: Mapping[str, Scenario]
) -> None:
    """Write the four F.5 tables for `traces` into `run_dir` (one trace in memory at a
    time)."""
    write_privacy_tables(run_dir, [trace_vps(t, scenarios_by_id) for t in traces])


def write_privacy_tables(run_dir: Path, vps: Iterable[GameVps]) -> None:
    """Write the four F.5 tables of the games' VPS rows into `run_dir`."""
    games = sorted(vps, key=lambda g: (g.game.game_id, g.game.trace_path))
    rows: dict[str, list[Row]] = {
        "belief_evidence.csv": [r for g in games for r in g.evidence],
        "pair_round_vps.csv": [r for g in games for r in g.pairs],
        "game_summary.csv": [g.game for g in games],
        "game_target_summary.csv": [r for g in games for r in g.targets],
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    for name, row_type in TABLES.items():
        write_table(run_dir / name, row_type, rows[name])


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}"
    return str(value)


def write_table(path: Path, row_type: type[Any], rows: Sequence[Any]) -> Path:
    """Write dataclass rows of `row_type` (header = its field names); returns the path."""
    if not is_dataclass(row_type):
        raise TypeError(f"write_table: {row_type!r} is not a dataclass")
    names = [f.name for f in fields(row_type)]
    # attrgetter, not dataclasses.astuple: astuple deep-copies every value (6 s of a
    # 1,080-game run) and the rows hold only scalars
    values = attrgetter(*names) if len(names) > 1 else lambda row: (getattr(row, names[0]),)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(names)
        writer.writerows([_cell(v) for v in values(row)] for row in rows)
    return path
