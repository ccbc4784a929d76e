"""PNG renderings of the Sotopia-ToM analyses (`outputs.analyses`), one per figure.

Built on `matplotlib.figure.Figure` (never pyplot) so rendering changes no global state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from confide import atomic
from confide.envs.sotopia_tom.outputs.analyses import FAILURE_MODES

Rows = Sequence[Mapping[str, Any]]


def _save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)
    with atomic.atomic_binary(path) as handle:
        figure.savefig(handle, format="png", dpi=100)
    return path


def _lineup(row: Mapping[str, Any]) -> str:
    return str(row["model"]) if row["strategy"] == "-" else f"{row['model']}:{row['strategy']}"


def acquisition_by_round(rows: Rows, path: Path) -> Path:
    """Figure 3a: cumulative share of desired items acquired, by round, one line a lineup."""
    figure = Figure(figsize=(6, 4), layout="constrained")
    axes = figure.add_subplot()
    for lineup in dict.fromkeys(_lineup(r) for r in rows):
        mine = [r for r in rows if _lineup(r) == lineup]
        axes.plot([r["round"] for r in mine], [r["share"] for r in mine], marker="o", label=lineup)
    axes.set(xlabel="round", ylabel="share of desired items acquired", ylim=(0, 1.05))
    axes.set_title("Figure 3a: knowledge acquisition by round")
    axes.legend()
    return _save(figure, path)


def infomgmt_by_sector(rows: Rows, path: Path) -> Path:
    """Figure 22: InfoMgmt per sector (easiest first), one bar a lineup."""
    sectors = list(dict.fromkeys(str(r["sector"]) for r in rows))
    lineups = list(dict.fromkeys(_lineup(r) for r in rows))
    value = {(str(r["sector"]), _lineup(r)): r["InfoMgmt"] or 0.0 for r in rows}
    figure = Figure(figsize=(max(6, len(sectors) * 1.1), 4), layout="constrained")
    axes = figure.add_subplot()
    width = 0.8 / len(lineups)
    for i, lineup in enumerate(lineups):
        xs = [s + i * width for s in range(len(sectors))]
        axes.bar(xs, [value.get((sector, lineup), 0.0) for sector in sectors], width, label=lineup)
    axes.set_xticks([s + 0.4 - width / 2 for s in range(len(sectors))], sectors, rotation=20)
    axes.set(ylabel="InfoMgmt", ylim=(0, 1.05))
    axes.set_title("Figure 22: InfoMgmt by sector")
    axes.legend()
    return _save(figure, path)


def ia_failure_modes(rows: Rows, path: Path) -> Path:
    """The IA failure-mode split: stacked shares per lineup."""
    figure = Figure(figsize=(6, 4), layout="constrained")
    axes = figure.add_subplot()
    labels = [_lineup(r) for r in rows]
    bottom = [0.0] * len(rows)
    for mode in FAILURE_MODES:
        shares = [r[f"{mode}_share"] or 0.0 for r in rows]
        axes.bar(labels, shares, bottom=bottom, label=mode.replace("_", " "))
        bottom = [b + s for b, s in zip(bottom, shares, strict=True)]
    axes.set(ylabel="share of failed inquiry items", ylim=(0, 1.05))
    axes.set_title("IA failure modes")
    axes.legend()
    return _save(figure, path)


def behaviour_by_method(rows: Rows, path: Path) -> Path:
    """Figure 3b-d: private-channel share, stale and any-violation shares per method."""
    figure = Figure(figsize=(9, 3.2), layout="constrained")
    methods = [str(r["method"]) for r in rows]
    for index, (column, title) in enumerate(
        (
            ("private_share", "(b) private-channel share of messages"),
            ("stale", "(c) stale conversations"),
            ("any_violation", "(d) conversations with a violation"),
        )
    ):
        axes = figure.add_subplot(1, 3, index + 1)
        values = [float(r[column]) if r[column] is not None else 0.0 for r in rows]
        axes.bar(range(len(methods)), values, color=[f"C{i % 10}" for i in range(len(methods))])
        axes.set_xticks(range(len(methods)), methods, rotation=30, ha="right", fontsize=7)
        axes.set(ylim=(0, 1.05), title=title)
        axes.title.set_fontsize(8)
    figure.suptitle("Figure 3b-d: behaviour by method, across models", fontsize=9)
    return _save(figure, path)
