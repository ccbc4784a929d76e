"""Task-level aggregation: repetitions are averaged within a task before anything else.

Incognita, section 5 "Estimator": every quantity is aggregated at the task level; within
a cell the repetitions of a task are averaged first and only then compared or averaged
over tasks. The task (not the trial) is therefore the unit of every interval and test.

Two input shapes are accepted:

* rows -- an iterable of mappings (e.g. `results.csv` rows as dicts), each with a task
  id, the factor columns that define a cell (default `model` and `condition`) and a
  numeric value column (bool, int or float, e.g. `success`; strings as read by
  `csv.DictReader` -- "0.5", "1", "True", "false" -- are parsed too). Rows of the same
  cell and task are repetitions. `aggregate_tasks` returns a `TaskTable`.
* arrays -- a float array of shape `(..., n_tasks, n_repetitions)`; `task_means` averages
  the last axis and returns shape `(..., n_tasks)`.

Decisions where the paper is silent: every cell must contain every task (a paired
analysis has no meaning otherwise), so a missing (cell, task) is an error rather than a
silently dropped task; tasks and cells are sorted by their string form so results do
not depend on row order; unequal repetition counts across tasks are allowed (each task
is still one unit) and reported in `TaskTable.repetitions`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from confide.stats._validate import StatsError, as_array


@dataclass(frozen=True)
class TaskTable:
    """Task-level means: one row per cell (a tuple of factor levels), one column per task.

    `means[i, j]` is the mean over repetitions of cell `cells[i]` on task `tasks[j]`;
    `repetitions[i, j]` is how many rows were averaged.
    """

    factors: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    tasks: tuple[str, ...]
    means: NDArray[np.float64]
    repetitions: NDArray[np.int64]

    def vector(self, **levels: str) -> NDArray[np.float64]:
        """The task-level vector (length n_tasks) of the cell named by every factor."""
        if set(levels) != set(self.factors):
            raise StatsError(
                f"vector() needs exactly the factors {list(self.factors)}; got {sorted(levels)}"
            )
        key = tuple(str(levels[f]) for f in self.factors)
        try:
            row = self.cells.index(key)
        except ValueError:
            raise StatsError(f"no cell {dict(zip(self.factors, key, strict=True))}") from None
        out: NDArray[np.float64] = self.means[row].copy()
        return out

    def matrix(self, factor: str, levels: Sequence[str], **fixed: str) -> NDArray[np.float64]:
        """Stack one vector per level of `factor` (other factors fixed): (len(levels), n_tasks).

        E.g. `table.matrix("model", models, condition="social")` gives the model-by-task
        score matrix that the pairwise, interaction and concordance functions take.
        """
        if factor not in self.factors:
            raise StatsError(f"factor must be one of {list(self.factors)}; got {factor!r}")
        if factor in fixed:
            raise StatsError(f"factor {factor!r} cannot also be fixed; got {fixed!r}")
        if isinstance(levels, str) or not levels:
            raise StatsError(f"levels must be a non-empty list of {factor} values; got {levels!r}")
        return np.stack([self.vector(**{factor: level}, **fixed) for level in levels])


def _key(value: object, *, row: int, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | np.integer):
        raise StatsError(f"row {row}: field {field!r} must be a str or int id; got {value!r}")
    return str(value)


_WORDS = {"true": 1.0, "false": 0.0}


def _number(value: object, *, row: int, field: str) -> float:
    out: float | None = None
    if isinstance(value, str):
        text = value.strip().lower()
        out = _WORDS.get(text)
        if out is None:
            with contextlib.suppress(ValueError):
                out = float(text)
    elif isinstance(value, bool | int | float | np.integer | np.floating):
        out = float(value)
    if out is not None and math.isfinite(out):
        return out
    raise StatsError(f"row {row}: field {field!r} must be a finite number or bool; got {value!r}")


def _field(record: Mapping[str, object], name: str, *, row: int) -> object:
    if name not in record:
        raise StatsError(f"row {row}: missing field {name!r} (has {sorted(record)})")
    return record[name]


def aggregate_tasks(
    rows: Iterable[Mapping[str, object]],
    *,
    value: str,
    task: str = "task",
    by: Sequence[str] = ("model", "condition"),
    repetition: str | None = None,
) -> TaskTable:
    """Average repetitions within (cell, task) -- Incognita section 5, "Estimator".

    `value` names the numeric column, `task` the task-id column, `by` the columns whose
    levels form a cell. If `repetition` names a column, a repeated (cell, task,
    repetition) is rejected as a duplicate row.
    """
    factors = tuple(by)
    if isinstance(by, str) or not factors or len(set(factors)) != len(factors):
        raise StatsError(f"by must be a non-empty list of distinct column names; got {by!r}")
    if task in factors or value in factors or task == value:
        raise StatsError(f"task={task!r}, value={value!r} and by={list(factors)} must differ")
    sums: dict[tuple[tuple[str, ...], str], float] = {}
    counts: dict[tuple[tuple[str, ...], str], int] = {}
    seen: set[tuple[tuple[str, ...], str, str]] = set()
    for i, record in enumerate(rows):
        if not isinstance(record, Mapping):
            raise StatsError(f"row {i}: must be a mapping of column -> value; got {record!r}")
        cell = tuple(_key(_field(record, f, row=i), row=i, field=f) for f in factors)
        tid = _key(_field(record, task, row=i), row=i, field=task)
        x = _number(_field(record, value, row=i), row=i, field=value)
        if repetition is not None:
            rep = _key(_field(record, repetition, row=i), row=i, field=repetition)
            if (cell, tid, rep) in seen:
                raise StatsError(
                    f"row {i}: duplicate repetition {rep!r} for task {tid!r} in cell "
                    f"{dict(zip(factors, cell, strict=True))}"
                )
            seen.add((cell, tid, rep))
        sums[(cell, tid)] = sums.get((cell, tid), 0.0) + x
        counts[(cell, tid)] = counts.get((cell, tid), 0) + 1
    if not counts:
        raise StatsError("rows is empty: nothing to aggregate")
    cells = tuple(sorted({c for c, _ in counts}))
    tasks = tuple(sorted({t for _, t in counts}))
    means = np.empty((len(cells), len(tasks)))
    reps = np.empty((len(cells), len(tasks)), dtype=np.int64)
    for i, cell in enumerate(cells):
        missing = [t for t in tasks if (cell, t) not in counts]
        if missing:
            raise StatsError(
                f"cell {dict(zip(factors, cell, strict=True))} has no rows for tasks "
                f"{missing[:5]}{' ...' if len(missing) > 5 else ''}; every cell needs every task"
            )
        for j, t in enumerate(tasks):
            reps[i, j] = counts[(cell, t)]
            means[i, j] = sums[(cell, t)] / counts[(cell, t)]
    return TaskTable(factors=factors, cells=cells, tasks=tasks, means=means, repetitions=reps)


def task_means(values: ArrayLike) -> NDArray[np.float64]:
    """Average the last axis (repetitions) of a `(..., n_tasks, n_repetitions)` array.

    Incognita section 5, "Estimator": repetitions are averaged within a task first.
    """
    arr = np.asarray(values)
    if arr.ndim < 2:
        raise StatsError(
            f"values must have shape (..., n_tasks, n_repetitions); got shape {arr.shape}"
        )
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise StatsError(f"values needs at least one task and one repetition; got {arr.shape}")
    checked = as_array("values", arr, ndim=arr.ndim)
    out: NDArray[np.float64] = checked.mean(axis=-1)
    return out
