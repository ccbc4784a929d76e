"""The four protocol-semantic VPS tables of a run directory (the CalBench paper §F.5):
belief_evidence.csv.gz, pair_round_vps.csv.gz, game_summary.csv, game_target_summary.csv.

Columns are the fields of the row types in vps.py, in that order. `write_table` (also the
writer of every audit table) is `confide.core.tables.write_table` with those columns, so
cells are formatted as in every other table and two runs of a deterministic lineup give
byte-identical files; games are written in (game id, trace path) order whatever order the
runner finished them in.

The per-update and per-pair tables hold a few hundred rows per game (252,000 and 108,000
for the 1,080-game Table 2 run, 85 MB as text), so they are gzipped (a tenth of the size;
pandas and `zcat` read them as they are), and all four are streamed (`PrivacyTables`): a
game's rows go to a spool file as soon as its trace is read, and the tables are assembled
in game order at the end, so memory does not grow with the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from confide.core import tables
from confide.core.tables import SpooledTable
from confide.core.trace import Trace
from confide.envs.calbench.privacy.tables import (
    COLUMNS,
    TABLES,
    GameKey,
    field_names,
    game_lines,
    trace_scenario,
)
from confide.envs.calbench.privacy.vps import GameVps, vps_rows
from confide.envs.calbench.scenario import Scenario


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
    with PrivacyTables(run_dir) as tables:
        for trace in traces:
            tables.add(trace_vps(trace, scenarios_by_id))


def game_key(vps: GameVps) -> GameKey:
    return vps.game.game_id, vps.game.trace_path


class PrivacyTables:
    """The four F.5 tables, fed one game at a time in any order (module docstring); the
    files are written when the context exits without an error."""

    def __init__(self, run_dir: Path) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self._tables = [
            SpooledTable(run_dir / name, columns)
            for name, columns in zip(TABLES, COLUMNS, strict=True)
        ]

    def add(self, vps: GameVps) -> None:
        self.add_lines(game_key(vps), game_lines(vps))

    def add_lines(self, key: GameKey, lines: Sequence[bytes]) -> None:
        """Add one game's rows as `game_lines` formatted them (in the worker that scored
        it: `audits.scored.ScoredGame`)."""
        for table, chunk in zip(self._tables, lines, strict=True):
            table.add_lines(key, chunk)

    def __enter__(self) -> PrivacyTables:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        for table in self._tables:
            table.close(write=kind is None)


def write_table(path: Path, row_type: type[Any], rows: Iterable[Any]) -> Path:
    """Write rows of `row_type`, a dataclass or named tuple (header = its field names;
    gzipped when the name ends in `.gz`); returns the path."""
    return tables.write_table(path, rows, field_names(row_type))
