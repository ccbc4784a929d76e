"""The four protocol-semantic VPS tables of the CalBench paper §F.5 as one game contributes to
them: their file names and row types (`TABLES`), their columns (the row types' fields, in
order) and one game's CSV lines (`game_lines`), formatted while the game is scored so the
run's output phase (outputs/privacy.py) only assembles them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any

from confide.core import tables
from confide.core.trace import Trace
from confide.envs.calbench.privacy.vps import (
    EvidenceRow,
    GameRow,
    GameVps,
    PairRoundRow,
    TargetRow,
    VpsError,
)
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError

Row = EvidenceRow | PairRoundRow | GameRow | TargetRow

TABLES: dict[str, type[Row]] = {
    "belief_evidence.csv.gz": EvidenceRow,
    "pair_round_vps.csv.gz": PairRoundRow,
    "game_summary.csv": GameRow,
    "game_target_summary.csv": TargetRow,
}
GameKey = tuple[str, str]
"""Tables list games in (game id, trace path) order."""


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


def game_lines(vps: GameVps) -> tuple[bytes, ...]:
    """One game's CSV lines of each of the four tables (in `TABLES` order); every row of
    a game starts with its trace path and game id (`GAME_COLUMNS`), formatted once."""
    rows: tuple[Sequence[Row], ...] = (vps.evidence, vps.pairs, [vps.game], vps.targets)
    return tuple(
        tables.csv_lines(columns, game_rows, lead=len(GAME_COLUMNS))
        for columns, game_rows in zip(COLUMNS, rows, strict=True)
    )


def field_names(row_type: type[Any]) -> list[str]:
    if is_dataclass(row_type):
        return [f.name for f in fields(row_type)]
    if issubclass(row_type, tuple) and hasattr(row_type, "_fields"):
        return list(row_type._fields)
    raise TypeError(f"write_table: {row_type!r} is neither a dataclass nor a named tuple")


COLUMNS = tuple(field_names(row_type) for row_type in TABLES.values())
"""Each table's columns, in `TABLES` order."""
GAME_COLUMNS = ("trace_path", "game_id")
"""The leading columns of every F.5 table (tests/calbench/test_calbench_vps_outputs.py):
the same in all of one game's rows."""
