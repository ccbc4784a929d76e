"""Leaderboard input rows: one per (run, game, seat), parsed from dicts or `results.csv`.

A row carries the three per-seat metrics the CalBench leaderboard rates (the CalBench paper
D.4 "Score-margin updates", §4.2):

- `coordination`: the seat's scheduled-meeting ratio M_sched / M in [0, 1]. Empty / None
  for a seat that attends no meeting (M = 0: it has nothing to coordinate); such a seat
  sits out the coordination rating for that game, and the coordination mean, but still
  counts for the other two metrics.
- `excess_cost`: max(0, c_real - c_oracle) for the seat, on the cost scale the agents saw
  (varied-cost errands stay on their raw {1, 10, 100} scale; D.4 says they are not remapped
  to {1, 2, 3} for the rating update). Must be >= 0, as the paper defines it.
- `excess_vps`: for model seats the reflection-calibrated excess VPS of the seat as a target
  (F.3 `excess_calibrated_vps_loss_total`), for reference protocols the protocol-semantic
  excess VPS. Empty / None when the run did not measure it; such a seat then sits out the
  VPS rating for that game but still counts for the other two metrics.

`results.csv` (written by the runner into every run directory, one row per episode and
seat) may hold any other columns; the leaderboard reads only these:

| column | required | meaning |
| --- | --- | --- |
| `run_id` | no | run identifier; defaults to the run directory's name |
| `game_id` | yes | game (episode) id, unique within the run |
| `seat` | yes | seat name, unique within the game |
| `participant` | yes | seat spec: a model spec (`openai/gpt-5-mini`) or reference name (`imap`) |
| `is_reference` | yes | `true`/`false`: reference protocols are ranked by raw metrics only |
| `coordination` | yes | float in [0, 1], or empty for a seat that attends no meeting |
| `excess_cost` | yes | float >= 0 |
| `excess_vps` | no | float, or empty when not measured |
| `cost_setting` | no | `uniform` or `varied`: the game's cost setting |
| `excess` | no | excess cost on Table 1's metric scale (varied errands as 1/2/3) |

The last two are shown, never rated: per setting, on the scale of the report's headline
table, so the leaderboard's numbers can be checked against the report's.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from confide.errors import ConfideError
from confide.untrusted import InputError, read_text

REQUIRED_COLUMNS: tuple[str, ...] = (
    "game_id",
    "seat",
    "participant",
    "is_reference",
    "coordination",
    "excess_cost",
)
OPTIONAL_COLUMNS: tuple[str, ...] = ("run_id", "excess_vps", "cost_setting", "excess")
_EMPTY_IS_NONE: tuple[str, ...] = ("coordination", "excess_vps", "cost_setting", "excess")
DISPLAY_ONLY: frozenset[str] = frozenset({"cost_setting", "excess"})
"""Fields shown beside the ratings but never rated, so not part of a run's digest."""
"""Columns whose empty cell means "not measured" rather than a bad value."""


class RatingInputError(ConfideError):
    """Leaderboard input (rows, results.csv, ratings file) is malformed or inconsistent."""


class SeatResult(BaseModel):
    """One seat's outcome in one game of one run: the leaderboard's unit of input."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(min_length=1)
    game_id: str = Field(min_length=1)
    seat: str = Field(min_length=1)
    participant: str = Field(min_length=1)
    is_reference: bool
    coordination: float | None = Field(ge=0.0, le=1.0)
    excess_cost: float = Field(ge=0.0)
    excess_vps: float | None = None
    cost_setting: str | None = None
    excess: float | None = Field(default=None, ge=0.0)

    @field_validator("seat", "game_id", "run_id", mode="before")
    @classmethod
    def _ints_as_text(cls, value: object) -> object:
        """Seat and game ids may arrive as integers (seat 0, game 3); store them as text."""
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("coordination", "excess_cost", "excess_vps", "excess")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {value!r}")
        return value


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "<row>"
    return f"field {field!r}: {first['msg']} (value {first.get('input')!r})"


def parse_results(
    rows: Iterable[SeatResult | Mapping[str, Any]], source: str = "rows"
) -> list[SeatResult]:
    """Validate rows given as `SeatResult`s or plain dicts; errors name the row index."""
    parsed: list[SeatResult] = []
    for index, row in enumerate(rows):
        if isinstance(row, SeatResult):
            parsed.append(row)
            continue
        try:
            parsed.append(SeatResult.model_validate(dict(row)))
        except ValidationError as exc:
            raise RatingInputError(f"{source}[{index}]: {_describe(exc)}") from None
    return parsed


def read_results_csv(path: Path, run_id: str | None = None) -> list[SeatResult]:
    """Read the leaderboard columns of a `results.csv`; `run_id` fills rows without one.

    Errors name the file, the line and the column.
    """
    try:
        text = read_text(path, "results file")
    except InputError as exc:
        raise RatingInputError(str(exc)) from None
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [column for column in REQUIRED_COLUMNS if column not in header]
        if missing:
            raise RatingInputError(
                f"{path}: missing column(s) {', '.join(missing)}; header is {header}"
            )
        rows: list[SeatResult] = []
        for record in reader:
            line = reader.line_num
            values: dict[str, Any] = {column: record[column] for column in REQUIRED_COLUMNS}
            for column in _EMPTY_IS_NONE:
                if column in REQUIRED_COLUMNS or column in header:
                    values[column] = (record.get(column) or "").strip() or None
            row_run = (record.get("run_id") or "").strip() or run_id
            if row_run is None:
                raise RatingInputError(
                    f"{path}:{line}: column 'run_id' is empty and no default run id was given"
                )
            values["run_id"] = row_run
            try:
                rows.append(SeatResult.model_validate(values))
            except ValidationError as exc:
                raise RatingInputError(f"{path}:{line}: {_describe(exc)}") from None
    return rows
