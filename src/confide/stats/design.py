"""Counterbalanced schedules for paired experiments.

Incognita (the Incognita paper, section 5 "Schedule"): one *worker* runs the same (task, model,
repetition) through all conditions in sequence, with the order of the conditions rotated
by a Latin square, so that the arms of every paired comparison fall inside one time window
and no arm is systematically run first. The runner executes this schedule when an
experiment sets `schedule: latin-square`.

Decisions
- The square is cyclic: row ``r`` is the condition list rotated left by ``r``. Every
  condition occupies every position exactly once across the ``k`` rows.
- Worker ``(task t, model m, repetition r)`` (indices in the order given) takes row
  ``(t + m + r) mod k``. Fixing any two of the three indices and letting the third run over
  ``k`` consecutive values visits every row once, so orders are balanced within every
  task, every model and every repetition (whenever the count is a multiple of ``k``), not
  only over the whole run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from confide.errors import ConfideError


class DesignError(ConfideError):
    """An invalid design argument (empty or repeated levels, bad counts)."""


class Worker(BaseModel):
    """One (task, model, repetition) and the order in which it runs the conditions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    task_id: str
    model: str
    repetition: int
    row: int
    """Row of the Latin square this worker follows."""
    order: tuple[str, ...]


def validate_levels(name: str, values: Sequence[str]) -> tuple[str, ...]:
    levels = tuple(values)
    if isinstance(values, str) or not levels:
        raise DesignError(f"{name} must be a non-empty list; got {values!r}")
    repeated = sorted({v for v in levels if levels.count(v) > 1})
    if repeated:
        raise DesignError(f"{name} repeats {repeated}")
    return levels


def latin_square(levels: Sequence[str]) -> list[tuple[str, ...]]:
    """The cyclic Latin square over `levels`: row r is `levels` rotated left by r."""
    items = validate_levels("levels", levels)
    return [items[r:] + items[:r] for r in range(len(items))]


def latin_schedule(
    task_ids: Sequence[str],
    models: Sequence[str],
    repetitions: int,
    conditions: Sequence[str],
) -> list[Worker]:
    """Every worker of the design with its condition order (section 5, "Schedule")."""
    tasks = validate_levels("task_ids", task_ids)
    names = validate_levels("models", models)
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise DesignError(f"repetitions must be an integer >= 1; got {repetitions!r}")
    square = latin_square(conditions)
    workers: list[Worker] = []
    for t, task in enumerate(tasks):
        for m, model in enumerate(names):
            for r in range(repetitions):
                row = (t + m + r) % len(square)
                workers.append(
                    Worker(
                        index=len(workers),
                        task_id=task,
                        model=model,
                        repetition=r,
                        row=row,
                        order=square[row],
                    )
                )
    return workers


def schedule_rows(workers: Sequence[Worker]) -> list[dict[str, Any]]:
    """The schedule as a table: one row per episode, with its position in its worker."""
    return [
        {
            "worker": w.index,
            "task_id": w.task_id,
            "model": w.model,
            "repetition": w.repetition,
            "square_row": w.row,
            "position": position,
            "condition": condition,
        }
        for w in workers
        for position, condition in enumerate(w.order)
    ]
