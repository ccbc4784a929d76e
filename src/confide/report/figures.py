"""Headline figures of a run, drawn from its summary.csv rows as small SVGs.

Each benchmark declares its figures as data (`Declaration.figures`: which summary columns
a scatter, panel scatter or bar chart draws, and with which labels); this module draws
the four kinds without knowing a benchmark. A benchmark that draws its own figures writes
them into figures/ and presents them through its report sections.

Drawn by `report.svgchart` as SVG text (no matplotlib), the same marks, colors and axes
for every benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from confide.declaration import Figure, GroupedBars, MetricBars, PanelScatter, Scatter
from confide.registry import known_declaration
from confide.report.svgchart import (
    MARKERS,
    Entry,
    Panel,
    color,
    data_range,
    legend,
    legend_row,
    legend_width,
    svg,
)
from confide.view.episodes import number

Rows = Sequence[dict[str, str]]


def headline_figures(
    benchmark: str, rows: Rows, published: Rows = ()
) -> list[tuple[str, bytes]]:
    """(title, SVG bytes) of the benchmark's declared headline figures; none when the
    summary lacks the columns they need. `published` are the rows of the run's
    published.csv (`confide.core.published`): a scatter plot with `published_in` draws
    the paper's points beside the run's, each labelled with its table in that column and
    given its own marker; bars never show them."""
    found = known_declaration(benchmark)
    out = []
    for figure in found.figures if found is not None else ():
        column = None if isinstance(figure, GroupedBars | MetricBars) else figure.published_in
        paper = [
            {**row, column: f"{row.get(column, '')} (paper {row.get('table', '')})"}
            for row in published
            if column is not None and row.get("source") == "published"
        ]
        drawn = draw(figure, [*rows, *paper])
        if drawn is not None:
            out.append((figure.title, drawn))
    return out


def draw(figure: Figure, rows: Rows) -> bytes | None:
    """The SVG of one declared figure, or None when no row has its columns."""
    drawer: Callable[[Any, Rows], bytes | None] = _DRAWERS[type(figure)]
    return drawer(figure, rows)


def _values(rows: Rows, *columns: str) -> list[tuple[dict[str, str], list[float]]]:
    """Rows with every column numeric, with those numbers."""
    out = []
    for row in rows:
        values = [number(row.get(c)) for c in columns]
        if all(v is not None for v in values):
            out.append((row, [v for v in values if v is not None]))
    return out


def _scatter(figure: Scatter, rows: Rows) -> bytes | None:
    """`y` against `x`: color per `color_by`, marker per `marker_by` (e.g. the CalBench
    coordination-privacy frontier)."""
    by, mark = figure.color_by, figure.marker_by
    points = _values(rows, figure.x, figure.y)
    if not points:
        return None
    methods = list(dict.fromkeys(r[by] for r, _ in points))
    conditions = list(dict.fromkeys(r.get(mark, "") for r, _ in points))
    entries = []
    marks: list[tuple[float, float, str, str]] = []
    for i, method in enumerate(methods):
        for j, condition in enumerate(conditions):
            mine = [v for r, v in points if r[by] == method and r.get(mark, "") == condition]
            if mine:
                shape = MARKERS[j % len(MARKERS)]
                entries.append(Entry(f"{method} · {condition}", color(i), shape))
                marks.extend((v[0], v[1], shape, color(i)) for v in mine)
    width, height = 768.0, 404.0
    key = legend_width(entries)
    panel = Panel(left=76, top=8, width=width - 76 - key - 26, height=height - 8 - 56,
                  xlim=data_range([v[0] for _, v in points]),
                  ylim=figure.ylim or data_range([v[1] for _, v in points]))
    for x, y, shape, fill in marks:
        panel.point(x, y, shape, fill)
    body = panel.axes(xlabel=figure.xlabel, ylabel=figure.ylabel, grid=True)
    body += legend(entries, width - key - 8, panel.top + panel.height / 2)
    return svg(width, height, body)


def _panel_scatter(figure: PanelScatter, rows: Rows) -> bytes | None:
    """`y` against `x`, one panel per `panel_by` value, one color per label (e.g. the
    CalBench paper's Figure 2: excess VPS against excess cost, one panel per cost
    setting)."""
    points = _values(rows, figure.x, figure.y)
    if not points:
        return None

    def label(row: dict[str, str]) -> str:
        return " · ".join(row.get(c, "") if i else row[c] for i, c in enumerate(figure.label_by))

    settings = list(dict.fromkeys(r.get(figure.panel_by, "") for r, _ in points))
    labels = list(dict.fromkeys(label(r) for r, _ in points))
    entries = [Entry(label, color(i), MARKERS[0]) for i, label in enumerate(labels)]
    width, height = 768.0, 360.0
    key = legend_width(entries)
    span = (width - key - 26 - 2 * 70 - 14) / len(settings)
    xlim = data_range([v[0] for _, v in points], from_zero=True)
    ylim = data_range([v[1] for _, v in points], from_zero=True)
    body: list[str] = []
    for k, setting in enumerate(settings):
        panel = Panel(left=70 + k * (span + 70), top=24, width=span, height=height - 24 - 56,
                      xlim=xlim, ylim=ylim)
        for row, (x, y) in points:
            if row.get(figure.panel_by, "") == setting:
                panel.point(x, y, MARKERS[0], color(labels.index(label(row))))
        body += panel.axes(xlabel=f"{setting}: {figure.xlabel}", ylabel=figure.ylabel,
                           grid=True)
    body += legend(entries, width - key - 8, 24 + (height - 80) / 2)
    return svg(width, height, body)


def _grouped_bars(figure: GroupedBars, rows: Rows) -> bytes | None:
    """Per `group_by` value, one bar per `series_by` value, a panel per value column (e.g.
    CalBench's coordination and excess VPS per condition)."""
    by, group = figure.series_by, figure.group_by
    points = _values(rows, *(column for column, _ in figure.values))
    if not points:
        return None
    methods = list(dict.fromkeys(r[by] for r, _ in points))
    conditions = list(dict.fromkeys(r.get(group, "") for r, _ in points))
    entries = [Entry(method, color(i)) for i, method in enumerate(methods)]
    width, height, top = 768.0, 340.0, 34.0
    step = 0.8 / len(methods)
    labels = [(k + 0.4 - step / 2, c.replace("-", "-\n", 1)) for k, c in enumerate(conditions)]
    body = legend_row(entries, width / 2, 4)
    span = (width - 2 * 70 - 24) / len(figure.values)
    for index, (_, label) in enumerate(figure.values):
        heights = {
            method: [next((v[index] for r, v in points
                           if r[by] == method and r.get(group, "") == c), 0.0)
                     for c in conditions]
            for method in methods
        }
        every = [h for hs in heights.values() for h in hs]
        panel = Panel(left=70 + index * (span + 70 + 14), top=top, width=span,
                      height=height - top - 40,
                      xlim=(-step / 2 - 0.1, len(conditions) - 0.1 - step / 2),
                      ylim=data_range(every, from_zero=True))
        for i, method in enumerate(methods):
            for k, h in enumerate(heights[method]):
                panel.bar(k + i * step - step / 2, step, h, color(i))
        body += panel.axes(ylabel=label, xticks=labels, xtick_size=9.5)
    return svg(width, height, body)


def _metric_bars(figure: MetricBars, rows: Rows) -> bytes | None:
    """A group per metric, one bar per summary row (e.g. Sotopia-ToM's DA, IA, EFF, CPV and
    InfoMgmt per model and strategy)."""
    metrics = figure.metrics
    points = _values(rows, *metrics)
    if not points:
        return None
    entries = [Entry(" · ".join(row.get(c, "") for c in figure.label_by), color(i))
               for i, (row, _) in enumerate(points)]
    width, height = 768.0, 326.0
    key = legend_width(entries)
    step = 0.8 / len(points)
    panel = Panel(left=64, top=8, width=width - 64 - key - 26, height=height - 8 - 34,
                  xlim=(-step / 2 - 0.1, len(metrics) - 0.1 - step / 2), ylim=figure.ylim)
    for i, (_, values) in enumerate(points):
        for k, value in enumerate(values):
            panel.bar(k + i * step - step / 2, step, value, color(i))
    body = panel.axes(ylabel=figure.ylabel,
                      xticks=[(k + 0.4 - step / 2, m) for k, m in enumerate(metrics)])
    body += legend(entries, width - key - 8, panel.top + panel.height / 2)
    return svg(width, height, body)


_DRAWERS: dict[type, Callable[[Any, Rows], bytes | None]] = {
    Scatter: _scatter,
    PanelScatter: _panel_scatter,
    GroupedBars: _grouped_bars,
    MetricBars: _metric_bars,
}
