"""The papers' published rows placed on a profile's metrics, marked as published.

The rows come from `confide.core.published.published_rows(benchmark_id)` (the papers'
tables as cited data: `PublishedRow` with `paper`, `table`, `model`, `setting` and
`metrics`). A row lands on a profile metric when it carries the metric's `published`
key and, for a metric split by columns (cost setting, condition, strategy), when each of
the row's settings that the design maps to one of those columns
(`EvalDesign.published_settings`) has the group's value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from confide.core.eval_design import EvalDesign
from confide.core.published import published_rows
from confide.evaluate.profile import MetricResult, Published


def with_published(design: EvalDesign, metrics: Sequence[MetricResult]) -> list[MetricResult]:
    """`metrics` with the published rows that sit on each (module docstring)."""
    rows = published_rows(design.benchmark)
    declared = {m.name: m for m in design.metrics}
    placed = []
    for metric in metrics:
        key = declared[metric.name].published
        by = declared[metric.name].by
        points = [
            Published(paper=row.paper, table=row.table, model=row.model,
                      setting=dict(row.setting), value=float(row.metrics[key]),
                      source=row.source)
            for row in rows
            if key is not None and key in row.metrics
            and _same_group(by, metric.group, row.setting, design.published_settings)
        ]
        placed.append(metric.model_copy(update={"published": points}))
    return placed


def _same_group(by: Sequence[str], group: str | None, setting: Mapping[str, str],
                names: Mapping[str, str]) -> bool:
    """Whether a published row's settings agree with the group (module docstring); a
    setting the row does not state agrees with every group."""
    values = dict(zip(by, (group or "").split(", "), strict=False))
    for column, value in values.items():
        stated = setting.get(names.get(column, column))
        if stated is not None and stated.strip().lower() != value.strip().lower():
            return False
    return True
