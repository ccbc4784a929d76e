"""PNG renderings of the analyses in `analyses` (incognita.md section 6.1, B.1, B.2).

One function per analysis, taking that analysis's rows (never empty: `write` draws only
what a run could compute). Built like `figures`: `Figure` on the Agg canvas, no pyplot.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from confide.envs.incognita.outputs.figures import Row, _ordered, _save


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


def ceiling_figure(rows: Sequence[Row], path: Path) -> Path:
    """Section 6.1: separated pairs per condition before and after ceiling removal."""
    figure = Figure(figsize=(6.5, 3.6), layout="constrained")
    axes = figure.subplots()
    xs = range(len(rows))
    axes.bar([x - 0.2 for x in xs], [r["separated"] for r in rows], 0.4, label="all tasks")
    kept = [r["separated_kept"] or 0 for r in rows]
    axes.bar([x + 0.2 for x in xs], kept, 0.4, label="ceiling/floor tasks removed")
    labels = [f"{r['condition']}\n{r['tasks']} -> {r['tasks_kept']} tasks" for r in rows]
    axes.set_xticks(list(xs), labels, fontsize="small")
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
    figure = Figure(figsize=(6.5, 3.6), layout="constrained")
    axes = figure.subplots()
    xs = range(len(rows))
    axes.bar([x - 0.2 for x in xs], [r["agreement"] for r in rows], 0.4, label="observed")
    axes.bar([x + 0.2 for x in xs], [r["null_agreement"] for r in rows], 0.4, label="null")
    for x, r in zip(xs, rows, strict=True):
        axes.annotate(f"{100 * r['null_share_reaching']:.1f}% of null reach",
                      (x, r["agreement"]), ha="center", va="bottom", fontsize="x-small")
    axes.set_xticks(list(xs), [r["condition"] for r in rows])
    axes.set_ylim(0, max(r["pairs"] for r in rows) + 0.7)
    axes.set_ylabel("pairwise orderings agreeing")
    axes.set_title(f"Split-half concordance ({rows[0]['splits']} splits)")
    axes.legend(fontsize="small")
    return _save(figure, path)


def mde_figure(rows: Sequence[Row], path: Path) -> Path:
    """Section 6.1: each condition's minimum detectable effect against its largest gap."""
    figure = Figure(figsize=(6.5, 3.6), layout="constrained")
    axes = figure.subplots()
    xs = range(len(rows))
    axes.bar([x - 0.2 for x in xs], [r["mde"] or 0.0 for r in rows], 0.4, label="MDE (80%)")
    axes.bar([x + 0.2 for x in xs], [r["largest_gap"] for r in rows], 0.4, label="largest gap")
    axes.set_xticks(list(xs), [r["condition"] for r in rows])
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
    ys = list(range(len(channel)))
    right.bar([y - 0.2 for y in ys], [r["database_passes"] for r in channel], 0.4,
              label="database passes")
    right.bar([y + 0.2 for y in ys], [r["failed_on_assertions"] for r in channel], 0.4,
              label="of which failed on assertions")
    right.set_xticks(ys, [r["condition"] for r in channel])
    right.set_ylabel("trials")
    right.set_title("Output-assertion channel", fontsize="medium")
    right.legend(fontsize="x-small")
    return _save(figure, path)
