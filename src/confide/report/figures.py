"""Headline figures of a run, drawn from its summary.csv rows as small SVGs.

- CalBench (calbench.md 1, 4.2, Table 2): the coordination-privacy frontier, coordination
  against excess VPS with one point per method and condition, and per-condition bars of
  both metrics.
- Sotopia-ToM (sotopia_tom.md 4.1, Table 2): DA, IA, EFF, CPV and InfoMgmt per model and
  strategy.
Incognita draws its own figures into figures/ (envs/incognita/outputs/figures.py).

Built on `matplotlib.figure.Figure` (never pyplot) so rendering changes no global state.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from confide.view.episodes import number

Rows = Sequence[dict[str, str]]


def headline_figures(benchmark: str, rows: Rows) -> list[tuple[str, bytes]]:
    """(title, SVG bytes) of the benchmark's headline figures; none when the summary
    lacks the columns they need."""
    drawers: dict[str, list[tuple[str, Callable[[Rows], Figure | None]]]] = {
        "calbench": [("Coordination-privacy frontier", _frontier),
                     ("Coordination and VPS per condition", _condition_bars)],
        "sotopia-tom": [("Sotopia-ToM metrics per model and strategy", _sotopia_bars)],
    }
    out = []
    for title, draw in drawers.get(benchmark, []):
        figure = draw(rows)
        if figure is not None:
            out.append((title, _svg(figure)))
    return out


def _svg(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    FigureCanvasSVG(figure)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "confide"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _values(rows: Rows, *columns: str) -> list[tuple[dict[str, str], list[float]]]:
    """Rows with every column numeric, with those numbers."""
    out = []
    for row in rows:
        values = [number(row.get(c)) for c in columns]
        if all(v is not None for v in values):
            out.append((row, [v for v in values if v is not None]))
    return out


def _frontier(rows: Rows) -> Figure | None:
    points = _values(rows, "VPS", "Coord.")
    if not points:
        return None
    figure = Figure(figsize=(8, 4.2), layout="constrained")
    axes = figure.subplots()
    methods = list(dict.fromkeys(r["Method"] for r, _ in points))
    conditions = list(dict.fromkeys(r.get("Condition", "") for r, _ in points))
    markers = "osD^v<>"
    for i, method in enumerate(methods):
        for j, condition in enumerate(conditions):
            mine = [v for r, v in points
                    if r["Method"] == method and r.get("Condition", "") == condition]
            if mine:
                axes.scatter([v[0] for v in mine], [v[1] for v in mine], color=f"C{i}",
                             marker=markers[j % len(markers)], s=45,
                             label=f"{method} · {condition}")
    axes.set_xlabel("excess VPS (lower leaks less)")
    axes.set_ylabel("coordination (% meetings scheduled)")
    axes.set_ylim(-5, 105)
    axes.grid(alpha=0.3)
    axes.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.02, 0.5))
    return figure


def _condition_bars(rows: Rows) -> Figure | None:
    points = _values(rows, "Coord.", "VPS")
    if not points:
        return None
    methods = list(dict.fromkeys(r["Method"] for r, _ in points))
    conditions = list(dict.fromkeys(r.get("Condition", "") for r, _ in points))
    figure = Figure(figsize=(8, 3.4), layout="constrained")
    left, right = figure.subplots(1, 2)
    width = 0.8 / len(methods)
    for index, (axes, label) in enumerate(((left, "coordination (%)"), (right, "excess VPS"))):
        for i, method in enumerate(methods):
            heights = [
                next((v[index] for r, v in points
                      if r["Method"] == method and r.get("Condition", "") == c), 0.0)
                for c in conditions
            ]
            axes.bar([k + i * width for k in range(len(conditions))], heights, width,
                     color=f"C{i}", label=method)
        axes.set_xticks([k + 0.4 - width / 2 for k in range(len(conditions))],
                        [c.replace("-", "-\n", 1) for c in conditions], fontsize="x-small")
        axes.set_ylabel(label)
    left.legend(fontsize="x-small")
    return figure


def _sotopia_bars(rows: Rows) -> Figure | None:
    metrics = ("DA", "IA", "EFF", "CPV", "InfoMgmt")
    points = _values(rows, *metrics)
    if not points:
        return None
    figure = Figure(figsize=(8, 3.4), layout="constrained")
    axes = figure.subplots()
    width = 0.8 / len(points)
    for i, (row, values) in enumerate(points):
        axes.bar([k + i * width for k in range(len(metrics))], values, width, color=f"C{i}",
                 label=f"{row.get('model', '')} · {row.get('strategy', '')}")
    axes.set_xticks([k + 0.4 - width / 2 for k in range(len(metrics))], list(metrics))
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("score (CPV: lower is better)")
    axes.legend(fontsize="x-small")
    return figure
