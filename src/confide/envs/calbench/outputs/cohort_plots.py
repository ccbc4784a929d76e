"""Drawing of CalBench's Figures 3 and 4 (`cohort`), on a `matplotlib.figure.Figure` with
the Agg canvas (no pyplot state), written atomically."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from confide import atomic


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    with atomic.atomic_binary(path) as handle:
        figure.savefig(handle, format="png", dpi=100)
    return path


def figure3(
    points: Mapping[str, Sequence[tuple[float, float]]],
    fits: Sequence[Mapping[str, Any]],
    path: Path,
) -> Path:
    """Messages per successful participant-meeting against excess cost, one color per
    model, dashed per-model OLS lines."""
    figure = Figure(figsize=(7.5, 4.5))
    axes = figure.add_subplot()
    for index, (model, xy) in enumerate(points.items()):
        color = f"C{index % 10}"
        axes.scatter(
            [x for x, _ in xy], [y for _, y in xy], s=12, alpha=0.6, color=color, label=model
        )
        fit = next(f for f in fits if f["model"] == model)
        if fit["slope"] is not None:
            xs = [min(x for x, _ in xy), max(x for x, _ in xy)]
            axes.plot(xs, [fit["intercept"] + fit["slope"] * x for x in xs], "--", color=color)
    axes.set_xlabel("messages per successful participant-meeting")
    axes.set_ylabel("excess displacement cost")
    axes.set_title("Figure 3: communication efficiency (one point per model seat and game)")
    axes.legend(fontsize=7)
    figure.tight_layout()
    return _save(figure, path)


def figure4(bars: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Fairness cost per model, one bar per cost setting, with 95% intervals."""
    models = list(dict.fromkeys(str(b["model"]) for b in bars))
    settings = list(dict.fromkeys(str(b["setting"]) for b in bars))
    width = 0.8 / max(len(settings), 1)
    figure = Figure(figsize=(7.5, 4.5))
    axes = figure.add_subplot()
    for j, setting in enumerate(settings):
        mine = {str(b["model"]): b for b in bars if b["setting"] == setting}
        xs = [i + j * width for i, m in enumerate(models) if m in mine]
        means = [float(mine[m]["fairness"]) for m in models if m in mine]
        errors = [
            [
                mean - (mine[m]["lower"] if mine[m]["lower"] is not None else mean)
                for m, mean in zip([m for m in models if m in mine], means, strict=True)
            ],
            [
                (mine[m]["upper"] if mine[m]["upper"] is not None else mean) - mean
                for m, mean in zip([m for m in models if m in mine], means, strict=True)
            ],
        ]
        axes.bar(xs, means, width, yerr=errors, capsize=3, color=f"C{j % 10}", label=setting)
    axes.set_xticks([i + width * (len(settings) - 1) / 2 for i in range(len(models))])
    axes.set_xticklabels(models, rotation=20, ha="right", fontsize=7)
    axes.set_ylabel("fairness cost (lower is better)")
    axes.set_title("Figure 4: fairness cost by model and cost setting (95% intervals)")
    axes.legend(fontsize=8)
    figure.tight_layout()
    return _save(figure, path)
