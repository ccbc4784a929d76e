"""The papers' published numbers as reference data, kept apart from a run's results.

A benchmark ships the numbers of its paper's model tables as CSV files in one folder
(`BenchmarkSpec.published`, e.g. ``envs/calbench/published/``) with an index,
``tables.json``::

    {"paper": "<title>", "model_column": "<summary column naming the model>",
     "tables": {"table2.csv": {"settings": ["Setting", "Condition"]}}}

Each CSV row has ``table``, ``section`` (of the paper) and ``model``, the setting columns
its index names (condition, method, arm, ...) and metric columns named exactly like the
run's summary.csv columns where a run has the same metric; an empty metric cell is a
number the paper does not give. These rows are facts cited from the paper, never a value
of a result column: `beside` prints them next to a run's own summary rows, each row
marked by a ``source`` column (``run`` or ``published``), and a run directory keeps them
in their own file (``published.csv``), so summary.csv holds only what the run measured.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from confide.errors import ConfideError

if TYPE_CHECKING:
    from confide.core.benchmark import BenchmarkSpec

INDEX = "tables.json"
BASE_COLUMNS = ("table", "section", "model")
RUN, PUBLISHED = "run", "published"
PUBLISHED_FILE = "published.csv"
"""The run directory's file of its summary rows beside the published ones."""


class PublishedRow(BaseModel):
    """One row of a paper's table: the model (our spec for it, or the reference method's
    name), its setting (condition, method, arm ...) and the published metrics."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    paper: str
    table: str
    section: str
    model: str
    setting: dict[str, str]
    metrics: dict[str, float]
    source: str = PUBLISHED


def published_rows(benchmark_id: str) -> list[PublishedRow]:
    """Every published row the benchmark ships (empty when it ships none)."""
    from confide.registry import get_benchmark

    spec = get_benchmark(benchmark_id)
    if spec.published is None:
        return []
    return list(_read(spec.id, spec.published))


def model_column(folder: Path) -> str:
    """The summary column a published row's `model` matches (the index's `model_column`)."""
    return str(_index(folder).get("model_column", "model"))


@cache
def _index(folder: Path) -> dict[str, Any]:
    path = folder / INDEX
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfideError(f"{path}: cannot read the published-table index: {exc}") from exc
    if not isinstance(index, dict) or not isinstance(index.get("tables"), dict):
        raise ConfideError(f"{path}: field 'tables' must map CSV file names to their settings")
    return index


@cache
def _read(benchmark: str, folder: Path) -> tuple[PublishedRow, ...]:
    index = _index(folder)
    paper = str(index.get("paper", ""))
    rows: list[PublishedRow] = []
    for name, entry in index["tables"].items():
        settings = [str(s) for s in entry.get("settings", [])]
        path = folder / name
        with path.open(newline="", encoding="utf-8") as handle:
            for line, record in enumerate(csv.DictReader(handle), start=2):
                rows.append(_row(benchmark, paper, settings, record, f"{path}:{line}"))
    return tuple(rows)


def _row(
    benchmark: str, paper: str, settings: list[str], record: dict[str, str], where: str
) -> PublishedRow:
    missing = [c for c in (*BASE_COLUMNS, *settings) if c not in record]
    if missing:
        raise ConfideError(f"{where}: missing column(s) {', '.join(missing)}")
    metrics: dict[str, float] = {}
    for column, cell in record.items():
        if column in BASE_COLUMNS or column in settings or cell in ("", None):
            continue
        try:
            metrics[column] = float(cell)
        except ValueError:
            raise ConfideError(f"{where}: field {column!r} is not a number: {cell!r}") from None
    return PublishedRow(
        benchmark=benchmark,
        paper=paper,
        table=record["table"],
        section=record["section"],
        model=record["model"],
        setting={s: record[s] for s in settings},
        metrics=metrics,
    )


def matches(row: PublishedRow, summary_row: Mapping[str, Any], column: str) -> bool:
    """Whether `row` reports the cell of `summary_row`: the same model, and every setting
    the summary row also has equal (settings it lacks, e.g. the paper's display name,
    do not count)."""
    if str(summary_row.get(column, "")) != row.model:
        return False
    return all(
        str(summary_row[key]) == value for key, value in row.setting.items() if key in summary_row
    )


def beside(
    summary: Sequence[Mapping[str, Any]], rows: Sequence[PublishedRow], column: str
) -> list[dict[str, Any]]:
    """The summary rows (``source`` = run), each followed by the published rows of the
    same cell (``source`` = published, with the paper's ``table``) in the summary's
    columns; empty when no published row matches, so a caller prints the plain summary."""
    out: list[dict[str, Any]] = []
    found = False
    for entry in summary:
        out.append({"source": RUN, "table": "", **entry})
        for row in rows:
            if matches(row, entry, column):
                found = True
                cells = {**row.setting, column: row.model, **row.metrics}
                out.append(
                    {
                        "source": row.source,
                        "table": row.table,
                        **{key: cells.get(key) for key in entry},
                    }
                )
    return out if found else []


def summary_beside(
    spec: BenchmarkSpec, summary: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """`beside` for a run of `spec`: its summary rows and the published rows of the same
    cells (empty when the benchmark ships none or none matches)."""
    if spec.published is None or not summary:
        return []
    rows = _read(spec.id, spec.published)
    return beside(summary, rows, model_column(spec.published))
