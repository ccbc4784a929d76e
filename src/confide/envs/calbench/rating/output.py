"""Leaderboard output: rich tables for the terminal, CSV files for reports.

Terminal cells follow D.4 "Displayed values": `mu ± sigma` of the metric's OpenSkill rating
with the interpretable raw mean in parentheses (coordination as a percentage). CSV files
hold the same numbers unrounded, one column per quantity.

Beside the rated raw means, each row shows excess cost per cost setting on Table 1's
metric scale (`excess_uniform`, `excess_varied`): the numbers of the report's headline
table for the same seats, so the two can be checked against each other. The rated "Excess
cost" stays on the raw 1/10/100 scale over every setting, as D.4 prescribes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from confide.core.tables import write_table
from confide.envs.calbench.rating.standings import (
    COST_SETTINGS,
    ModelStanding,
    ReferenceStanding,
    model_standings,
    reference_standings,
)
from confide.envs.calbench.rating.state import LeaderboardState, Metric

MODEL_CSV_COLUMNS: tuple[str, ...] = (
    "rank",
    "participant",
    "mmr",
    *(f"{metric.value}_{part}" for metric in Metric for part in ("mu", "sigma", "mean")),
    *(f"excess_{setting}_mean" for setting in COST_SETTINGS),
    "seats",
    "games",
    "rated_games",
)
REFERENCE_CSV_COLUMNS: tuple[str, ...] = (
    "rank",
    "participant",
    *(f"{metric.value}_mean" for metric in Metric),
    *(f"excess_{setting}_mean" for setting in COST_SETTINGS),
    "seats",
    "games",
)
_TITLES: dict[Metric, str] = {
    Metric.COORDINATION: "Coord.\n(% met)",
    Metric.EXCESS_COST: "Excess cost\n(1/10/100)",
    Metric.EXCESS_VPS: "Excess VPS\n(slots)",
}
_SETTING_TITLE = "Excess\n{setting}\n(Table 1)"


def _settings(row: ModelStanding | ReferenceStanding) -> list[str]:
    return [_raw(Metric.EXCESS_COST, row.setting_excess.get(s)) for s in COST_SETTINGS]


def _raw(metric: Metric, value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if metric is Metric.COORDINATION else f"{value:.2f}"


def model_table(standings: list[ModelStanding]) -> Table:
    """Rich table of rated models (fits 80 columns; seat counts are in the CSV)."""
    table = Table(title="CalBench leaderboard: models (OpenSkill, score margins)")
    table.add_column("#", justify="right")
    table.add_column("Participant", no_wrap=True)
    table.add_column("MMR", justify="right")
    for metric in Metric:
        table.add_column(f"{_TITLES[metric]}\nμ±σ\n(mean)", justify="right", min_width=8)
    table.add_column("Excess\nTable 1\nU / V", justify="right")
    table.add_column("Rated\ngames", justify="right")
    for row in standings:
        cells = [
            f"{row.ratings[m].mu:.1f}±{row.ratings[m].sigma:.1f}\n({_raw(m, row.means[m])})"
            for m in Metric
        ]
        table.add_row(
            str(row.rank),
            row.participant,
            f"{row.mmr:.2f}",
            *cells,
            "\n".join(_settings(row)),
            str(row.rated_games),
        )
    return table


def reference_table(standings: list[ReferenceStanding]) -> Table:
    """Rich table of reference protocols (raw metrics only)."""
    table = Table(title="Reference protocols (raw metrics, not rated)")
    table.add_column("#", justify="right")
    table.add_column("Protocol", no_wrap=True)
    for metric in Metric:
        table.add_column(_TITLES[metric], justify="right")
    for setting in COST_SETTINGS:
        table.add_column(_SETTING_TITLE.format(setting=setting), justify="right")
    table.add_column("Seats", justify="right")
    for row in standings:
        table.add_row(
            str(row.rank),
            row.participant,
            *(_raw(m, row.means[m]) for m in Metric),
            *_settings(row),
            str(row.seats),
        )
    return table


def leaderboard_tables(state: LeaderboardState) -> list[Table]:
    """The model table, and the reference table when there are reference protocols."""
    references = reference_standings(state)
    return [model_table(model_standings(state))] + (
        [reference_table(references)] if references else []
    )


def print_leaderboard(state: LeaderboardState, console: Console | None = None) -> None:
    """Print `leaderboard_tables` as rich tables."""
    out = console if console is not None else Console()
    for table in leaderboard_tables(state):
        out.print(table)


def write_model_csv(state: LeaderboardState, path: Path) -> None:
    """Write the model standings (columns `MODEL_CSV_COLUMNS`)."""
    rows = [
        [
            row.rank,
            row.participant,
            row.mmr,
            *(
                value
                for m in Metric
                for value in (row.ratings[m].mu, row.ratings[m].sigma, row.means[m])
            ),
            *(row.setting_excess.get(s) for s in COST_SETTINGS),
            row.seats,
            row.games,
            row.rated_games,
        ]
        for row in model_standings(state)
    ]
    _write(path, MODEL_CSV_COLUMNS, rows)


def write_reference_csv(state: LeaderboardState, path: Path) -> None:
    """Write the reference-protocol standings (columns `REFERENCE_CSV_COLUMNS`)."""
    rows = [
        [
            row.rank,
            row.participant,
            *(row.means[m] for m in Metric),
            *(row.setting_excess.get(s) for s in COST_SETTINGS),
            row.seats,
            row.games,
        ]
        for row in reference_standings(state)
    ]
    _write(path, REFERENCE_CSV_COLUMNS, rows)


def _write(path: Path, columns: tuple[str, ...], rows: list[list[Any]]) -> None:
    write_table(path, [dict(zip(columns, row, strict=True)) for row in rows], columns)
