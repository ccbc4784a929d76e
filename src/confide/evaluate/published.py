"""The papers' published rows placed on a profile's metrics, marked as published.

The rows come from `confide.core.published.published_rows(benchmark_id)` (the papers'
tables as cited data: `PublishedRow` with `paper`, `table`, `model`, `setting` and
`metrics`). A row lands on a profile metric when it carries the metric's `published`
key and, for a metric split by columns (cost setting, condition), when every value of
the row's setting names a part of the group. Without that module the profile says that no
published rows are available rather than showing none silently.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from confide.core.eval_design import EvalDesign
from confide.evaluate.profile import MetricResult, Published

PUBLISHED_MODULE = "confide.core.published"


def _rows_function() -> Callable[[str], Sequence[Any]] | None:
    try:
        module = importlib.import_module(PUBLISHED_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name is not None and PUBLISHED_MODULE.startswith(exc.name):
            return None
        raise
    function: Callable[[str], Sequence[Any]] = module.published_rows
    return function


def available() -> bool:
    """Whether this installation ships the papers' published rows."""
    return _rows_function() is not None


def with_published(design: EvalDesign, metrics: Sequence[MetricResult]) -> list[MetricResult]:
    """`metrics` with the published rows that sit on each (module docstring)."""
    rows_of = _rows_function()
    if rows_of is None:
        return list(metrics)
    rows = rows_of(design.benchmark)
    keys = {m.name: m.published for m in design.metrics}
    placed = []
    for metric in metrics:
        key = keys.get(metric.name)
        points = [
            Published(paper=row.paper, table=row.table, model=row.model,
                      setting=dict(row.setting), value=float(row.metrics[key]),
                      source=row.source)
            for row in rows
            if key is not None and key in row.metrics and _same_group(metric.group, row.setting)
        ]
        placed.append(metric.model_copy(update={"published": points}))
    return placed


def _same_group(group: str | None, setting: dict[str, str]) -> bool:
    """Whether a published row's setting names only values of the group (a row of the
    uniform-cost setting sits on every group of uniform cost)."""
    if group is None:
        return True
    parts = {part.strip().lower() for part in group.split(",")}
    return {str(value).strip().lower() for value in setting.values()} <= parts
