"""PNG renderings of the analyses in `analyses` (the Incognita paper, section 6.1, B.1, B.2).

One function per analysis, taking that analysis's rows (never empty: `write` draws only
what a run could compute). Built like `figures`: `Figure` on the Agg canvas, no pyplot.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from confide.envs.incognita.outputs.figures import Row, _ordered, _save

Bars = tuple[str, Sequence[float]]
"""One side of a pair of bars: its legend label and its heights, one per tick."""


def separability_figure(rows: Sequence[Row], path: Path) -> Path:
    """Section 6.1: every pair's paired gap with its 95% t interval, one panel per
    condition (all tasks; separated pairs filled)."""
    shown = [r for r in rows if r["task_set"] == "all"]
    conditions = _ordered(shown, "condition")
    figure = Figure(figsize=(4 * len(conditions) + 1, 3.6), layout="constrained")
    panels = figure.subplots(1, len(conditions), sharey=True, squeeze=False)[0]
    for axes, condition in zip(panels, conditions, strict=True):
        pairs = [r for r in shown if r["condition"] == condition]
        for i, r in enumerate(pairs):
            axes.errorbar(
                [r["estimate"]], [i],
                xerr=[[r["estimate"] - r["lower"]], [r["upper"] - r["estimate"]]],
                fmt="o", capsize=3, color="C3" if r["separates"] else "C0",
                markerfacecolor="C3" if r["separates"] else "white",
            )
        axes.axvline(0.0, color="grey", linewidth=0.8)
        axes.set_yticks(range(len(pairs)), [r["pair"] for r in pairs], fontsize="x-small")
        separated = sum(r["separates"] for r in pairs)
        axes.set_title(f"{condition}: {separated} of {len(pairs)} separate", fontsize="medium")
        axes.set_xlabel("paired gap (95% t interval)")
    return _save(figure, path)


def _paired_bars(
    axes: Axes, ticks: Sequence[str], left: Bars, right: Bars, *, tick_size: str = "medium"
) -> None:
    """Two bars per tick on `axes`, each side a (legend label, heights) pair: how the
    analyses set one quantity beside another per condition."""
    xs = range(len(ticks))
    for shift, (label, heights) in ((-0.2, left), (0.2, right)):
        axes.bar([x + shift for x in xs], heights, 0.4, label=label)
    axes.set_xticks(list(xs), ticks, fontsize=tick_size)


def _one_axes() -> tuple[Figure, Axes]:
    figure = Figure(figsize=(6.5, 3.6), layout="constrained")
    return figure, figure.subplots()


def ceiling_figure(rows: Sequence[Row], path: Path) -> Path:
    """Section 6.1: separated pairs per condition before and after ceiling removal."""
    figure, axes = _one_axes()
    labels = [f"{r['condition']}\n{r['tasks']} -> {r['tasks_kept']} tasks" for r in rows]
    _paired_bars(axes, labels, ("all tasks", [r["separated"] for r in rows]),
                 ("ceiling/floor tasks removed", [r["separated_kept"] or 0 for r in rows]),
                 tick_size="small")
    axes.set_ylim(0, max(r["pairs"] for r in rows) + 0.5)
    axes.set_ylabel("separated model pairs")
    axes.set_title("Ceiling removal")
    axes.legend(fontsize="small")
    return _save(figure, path)


def dispersion_figure(rows: Sequence[Row], path: Path) -> Path:
    """Appendix B.1: the per-task dispersion contrast, its mean and exact p."""
    tasks = [r for r in rows if r["task"] != "all"]
    test = next(r for r in rows if r["task"] == "all")
    figure = Figure(figsize=(max(5.0, 0.35 * len(tasks) + 2), 3.6), layout="constrained")
    axes = figure.subplots()
    axes.bar(range(len(tasks)), [r["contrast"] for r in tasks], color="C2")
    axes.axhline(test["contrast"], color="C3", linestyle="--", label="task mean")
    axes.axhline(0.0, color="grey", linewidth=0.8)
    axes.set_xticks(range(len(tasks)), [r["task"] for r in tasks], rotation=90, fontsize="x-small")
    axes.set_ylabel("social SS - indirect SS")
    axes.set_title(
        f"Dispersion test: mean {test['contrast']:+.4f}, two-sided p={test['p_value']:.4g}",
        fontsize="medium",
    )
    axes.legend(fontsize="small")
    return _save(figure, path)


def concordance_figure(rows: Sequence[Row], path: Path) -> Path:
    """Section 6.1: split-half agreement on pairwise orderings against its null."""
    figure, axes = _one_axes()
    _paired_bars(axes, [r["condition"] for r in rows],
                 ("observed", [r["agreement"] for r in rows]),
                 ("null", [r["null_agreement"] for r in rows]))
    for x, r in enumerate(rows):
        axes.annotate(f"{100 * r['null_share_reaching']:.1f}% of null reach",
                      (x, r["agreement"]), ha="center", va="bottom", fontsize="x-small")
    axes.set_ylim(0, max(r["pairs"] for r in rows) + 0.7)
    axes.set_ylabel("pairwise orderings agreeing")
    axes.set_title(f"Split-half concordance ({rows[0]['splits']} splits)")
    axes.legend(fontsize="small")
    return _save(figure, path)


def mde_figure(rows: Sequence[Row], path: Path) -> Path:
    """Section 6.1: each condition's minimum detectable effect against its largest gap."""
    figure, axes = _one_axes()
    _paired_bars(axes, [r["condition"] for r in rows],
                 ("MDE (80%)", [r["mde"] or 0.0 for r in rows]),
                 ("largest gap", [r["largest_gap"] for r in rows]))
    axes.set_ylabel("success difference")
    axes.set_title("Minimum detectable effect vs observed gaps")
    axes.legend(fontsize="small")
    return _save(figure, path)


def database_only_figure(rows: Sequence[Row], path: Path) -> Path:
    """Appendix B.2: each pre-specified contrast from the final verdict and from the
    database channel alone."""
    figure = Figure(figsize=(8, 0.5 * len(rows) + 1.5), layout="constrained")
    axes = figure.subplots()
    for i, r in enumerate(rows):
        for shift, key, colour in ((-0.15, "final", "C0"), (0.15, "database", "C1")):
            axes.errorbar(
                [r[key]], [i + shift],
                xerr=[[r[key] - r[f"{key}_lower"]], [r[f"{key}_upper"] - r[key]]],
                fmt="o", capsize=3, color=colour, label=key if i == 0 else None,
            )
    axes.axvline(0.0, color="grey", linewidth=0.8)
    axes.set_yticks(range(len(rows)), [f"{r['model']}: {r['contrast']}" for r in rows],
                    fontsize="x-small")
    changed = sum(r["decision_changed"] for r in rows)
    axes.set_title(f"Database-only recompute: {changed} zero-crossing decision(s) change",
                   fontsize="medium")
    axes.legend(fontsize="small")
    return _save(figure, path)


def audits_figure(reader: Sequence[Row], channel: Sequence[Row], path: Path) -> Path:
    """Appendix B.2's two audits: label moves under the reader credits (left) and database
    passes failed on the output-assertion channel (right), per condition."""
    figure = Figure(figsize=(11, 3.8), layout="constrained")
    left, right = figure.subplots(1, 2)
    xs = list(range(len(reader)))
    for k, (key, label) in enumerate((
        ("requested_not_obtained", "requested, not obtained"),
        ("with_nonreference_reads", "with non-reference reads"),
        ("lenient_changed", "relabelled (lenient)"),
        ("strict_changed", "relabelled (strict)"),
    )):
        left.bar([x - 0.3 + 0.2 * k for x in xs], [r[key] for r in reader], 0.2, label=label)
    left.set_xticks(xs, [r["condition"] for r in reader])
    left.set_ylim(0, max(1, *(r["requested_not_obtained"] for r in reader)) * 1.1)
    left.set_ylabel("trials")
    left.set_title("Reader audit (non-reference reads)", fontsize="medium")
    left.legend(fontsize="x-small")
    _paired_bars(right, [r["condition"] for r in channel],
                 ("database passes", [r["database_passes"] for r in channel]),
                 ("of which failed on assertions", [r["failed_on_assertions"] for r in channel]))
    right.set_ylabel("trials")
    right.set_title("Output-assertion channel", fontsize="medium")
    right.legend(fontsize="x-small")
    return _save(figure, path)
