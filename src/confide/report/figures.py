"""Headline figures of a run, drawn from its summary.csv rows as small SVGs.

- CalBench (calbench.md 1, 4.2, Table 2): the coordination-privacy frontier, coordination
  against excess VPS with one point per method and condition, Figure 2's privacy-cost
  plane (excess VPS against excess cost, one panel per cost setting), and per-condition
  bars of both metrics.
- Sotopia-ToM (sotopia_tom.md 4.1, Table 2): DA, IA, EFF, CPV and InfoMgmt per model and
  strategy.
Incognita draws its own figures into figures/ (envs/incognita/outputs/figures.py).

Drawn by `report.svgchart` as SVG text (no matplotlib: issue 15), the same marks,
colors and axes as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    """(title, SVG bytes) of the benchmark's headline figures; none when the summary
    lacks the columns they need. `published` are the rows of the run's published.csv
    (`confide.core.published`): the scatter plots draw the paper's points beside the
    run's, each labelled with its table and given its own marker; bars never show them."""
    paper = [
        {**row, "Condition": f"{row.get('Condition', '')} (paper {row.get('table', '')})"}
        for row in published
        if row.get("source") == "published"
    ]
    drawers: dict[str, list[tuple[str, Callable[[Rows], bytes | None], bool]]] = {
        "calbench": [("Coordination-privacy frontier", _frontier, True),
                     ("Figure 2: privacy-cost plane", _privacy_cost, True),
                     ("Coordination and VPS per condition", _condition_bars, False)],
        "sotopia-tom": [("Sotopia-ToM metrics per model and strategy", _sotopia_bars, False)],
    }
    out = []
    for title, draw, beside in drawers.get(benchmark, []):
        figure = draw([*rows, *paper] if beside else rows)
        if figure is not None:
            out.append((title, figure))
    return out


def _values(rows: Rows, *columns: str) -> list[tuple[dict[str, str], list[float]]]:
    """Rows with every column numeric, with those numbers."""
    out = []
    for row in rows:
        values = [number(row.get(c)) for c in columns]
        if all(v is not None for v in values):
            out.append((row, [v for v in values if v is not None]))
    return out


def _frontier(rows: Rows) -> bytes | None:
    """Coordination against excess VPS: color per method, marker per condition."""
    points = _values(rows, "VPS", "Coord.")
    if not points:
        return None
    methods = list(dict.fromkeys(r["Method"] for r, _ in points))
    conditions = list(dict.fromkeys(r.get("Condition", "") for r, _ in points))
    entries = []
    marks: list[tuple[float, float, str, str]] = []
    for i, method in enumerate(methods):
        for j, condition in enumerate(conditions):
            mine = [v for r, v in points
                    if r["Method"] == method and r.get("Condition", "") == condition]
            if mine:
                shape = MARKERS[j % len(MARKERS)]
                entries.append(Entry(f"{method} · {condition}", color(i), shape))
                marks.extend((v[0], v[1], shape, color(i)) for v in mine)
    width, height = 768.0, 404.0
    key = legend_width(entries)
    panel = Panel(left=76, top=8, width=width - 76 - key - 26, height=height - 8 - 56,
                  xlim=data_range([v[0] for _, v in points]), ylim=(-5.0, 105.0))
    for x, y, shape, fill in marks:
        panel.point(x, y, shape, fill)
    body = panel.axes(xlabel="excess VPS (lower leaks less)",
                      ylabel="coordination (% meetings scheduled)", grid=True)
    body += legend(entries, width - key - 8, panel.top + panel.height / 2)
    return svg(width, height, body)


def _privacy_cost(rows: Rows) -> bytes | None:
    """CalBench paper Figure 2: excess VPS against excess cost, one panel per cost setting
    (uniform left, varied right), one point per method and condition; nearer the origin
    is better on both."""
    points = _values(rows, "VPS", "Excess")
    if not points:
        return None
    settings = list(dict.fromkeys(r.get("Setting", "") for r, _ in points))
    labels = list(dict.fromkeys(f"{r['Method']} · {r.get('Condition', '')}" for r, _ in points))
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
            if row.get("Setting", "") == setting:
                index = labels.index(f"{row['Method']} · {row.get('Condition', '')}")
                panel.point(x, y, MARKERS[0], color(index))
        body += panel.axes(xlabel=f"{setting}: excess VPS", ylabel="excess cost", grid=True)
    body += legend(entries, width - key - 8, 24 + (height - 80) / 2)
    return svg(width, height, body)


def _condition_bars(rows: Rows) -> bytes | None:
    """Per condition, one bar per method: coordination (left) and excess VPS (right)."""
    points = _values(rows, "Coord.", "VPS")
    if not points:
        return None
    methods = list(dict.fromkeys(r["Method"] for r, _ in points))
    conditions = list(dict.fromkeys(r.get("Condition", "") for r, _ in points))
    entries = [Entry(method, color(i)) for i, method in enumerate(methods)]
    width, height, top = 768.0, 340.0, 34.0
    step = 0.8 / len(methods)
    labels = [(k + 0.4 - step / 2, c.replace("-", "-\n", 1)) for k, c in enumerate(conditions)]
    body = legend_row(entries, width / 2, 4)
    span = (width - 2 * 70 - 24) / 2
    for index, label in enumerate(("coordination (%)", "excess VPS")):
        heights = {
            method: [next((v[index] for r, v in points
                           if r["Method"] == method and r.get("Condition", "") == c), 0.0)
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


def _sotopia_bars(rows: Rows) -> bytes | None:
    """DA, IA, EFF, CPV and InfoMgmt, one bar per (model, strategy) row."""
    metrics = ("DA", "IA", "EFF", "CPV", "InfoMgmt")
    points = _values(rows, *metrics)
    if not points:
        return None
    entries = [Entry(f"{row.get('model', '')} · {row.get('strategy', '')}", color(i))
               for i, (row, _) in enumerate(points)]
    width, height = 768.0, 326.0
    key = legend_width(entries)
    step = 0.8 / len(points)
    panel = Panel(left=64, top=8, width=width - 64 - key - 26, height=height - 8 - 34,
                  xlim=(-step / 2 - 0.1, len(metrics) - 0.1 - step / 2), ylim=(0.0, 1.05))
    for i, (_, values) in enumerate(points):
        for k, value in enumerate(values):
            panel.bar(k + i * step - step / 2, step, value, color(i))
    body = panel.axes(ylabel="score (CPV: lower is better)",
                      xticks=[(k + 0.4 - step / 2, m) for k, m in enumerate(metrics)])
    body += legend(entries, width - key - 8, panel.top + panel.height / 2)
    return svg(width, height, body)
