"""PNG renderings of Figures 2, 3 and 6 and Tables 1-2 (the Incognita paper, sections 6.1-6.3,
B.1, B.3).

Each function takes the rows of the matching `tables` function and writes one PNG.
Figures are built on `matplotlib.figure.Figure` with the Agg canvas, never through
pyplot, so nothing global changes and rendering is safe from any thread. Following
section 5, success is drawn without endpoint error bars; intervals appear only on paired
differences and interactions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from confide import atomic
from confide.envs.incognita.outputs.failures import FailureType

Row = dict[str, Any]
OUTCOME_COLOURS: dict[str, str] = {
    "success": "#4c9a2a",
    FailureType.NEVER_REQUESTED.value: "#b2182b",
    FailureType.REQUESTED_NOT_OBTAINED.value: "#ef8a62",
    FailureType.OBTAINED_NOT_DELIVERED.value: "#fddbc7",
    FailureType.DELIVERED_INCORRECT.value: "#67a9cf",
    FailureType.CORRECT_UNCONFIRMED.value: "#2166ac",
}
PROCESS_LABELS: dict[str, str] = {
    "role_identification": "role identification",
    "holder_contacted": "holder contacted",
    "information_acquisition": "information acquisition",
    "execution": "execution / assignment",
}


def _save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)
    with atomic.atomic_binary(path) as handle:
        figure.savefig(handle, format="png", dpi=100)
    return path


def _ordered(rows: Sequence[Row], key: str) -> list[str]:
    return list(dict.fromkeys(str(r[key]) for r in rows))


def _empty(axes: Axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes)
    axes.set_axis_off()


def figure2(success: Sequence[Row], differences: Sequence[Row], path: Path) -> Path:
    """Success per model and arm (left; the native anchor first when the run has it) and
    paired differences between neighbouring arms (right)."""
    figure = Figure(figsize=(11, 4.2), layout="constrained")
    left, right = figure.subplots(1, 2)
    conditions = _ordered(success, "condition")
    for model in _ordered(success, "model"):
        points = {r["condition"]: r["success"] for r in success if r["model"] == model}
        xs = [i for i, c in enumerate(conditions) if points.get(c) is not None]
        left.plot(xs, [points[conditions[i]] for i in xs], marker="o", label=model)
    left.set_xticks(range(len(conditions)), conditions)
    left.set_ylim(-0.02, 1.02)
    left.set_ylabel("task-level success")
    left.set_title("Success per model and arm")
    left.legend(fontsize="small")
    if differences:
        contrasts = _ordered(differences, "contrast")
        models = _ordered(differences, "model")
        width = 0.8 / max(1, len(models))
        for j, model in enumerate(models):
            for i, contrast in enumerate(contrasts):
                row = next(
                    (r for r in differences if r["model"] == model and r["contrast"] == contrast),
                    None,
                )
                if row is None:
                    continue
                x = i - 0.4 + width * (j + 0.5)
                error = [[row["estimate"] - row["lower"]], [row["upper"] - row["estimate"]]]
                right.errorbar(
                    [x],
                    [row["estimate"]],
                    yerr=error,
                    fmt="o",
                    capsize=3,
                    color=f"C{j}",
                    label=model if i == 0 else None,
                )
        right.axhline(0.0, color="grey", linewidth=0.8)
        right.set_xticks(range(len(contrasts)), contrasts)
        right.set_ylabel("paired difference (95% t interval)")
        right.set_title("Neighbouring arms, paired over tasks")
    else:
        _empty(right, "no paired differences (fewer than two conditions or tasks)")
    return _save(figure, path)


def _cost_label(value: Any) -> str:
    return f"${value:.3f}" if isinstance(value, float) else str(value)


def figure6(costs: Sequence[Row], path: Path) -> Path:
    """Section 6.3: agent actions per episode (left) and cost per episode in both scopes
    (right: the whole episode as the light bar, the evaluated agent's own calls as the
    dark bar inside it), one bar per model in each arm. A cell whose calls are not all
    priced is written, not drawn: ``unpriced`` or ``partial``."""
    figure = Figure(figsize=(11, 4.2), layout="constrained")
    left, right = figure.subplots(1, 2)
    conditions = _ordered(costs, "condition")
    models = _ordered(costs, "model")
    width = 0.8 / max(1, len(models))
    for j, model in enumerate(models):
        cells = {r["condition"]: r for r in costs if r["model"] == model}
        xs = [i - 0.4 + width * (j + 0.5) for i, c in enumerate(conditions) if c in cells]
        shown = [cells[c] for c in conditions if c in cells]
        left.bar(xs, [r["agent_actions"] or 0.0 for r in shown], width, color=f"C{j}",
                 label=model)
        for x, row in zip(xs, shown, strict=True):
            total, agent = row["cost_total"], row["cost_agent"]
            if isinstance(total, float):
                right.bar([x], [total], width, color=f"C{j}", alpha=0.35)
            if isinstance(agent, float):
                right.bar([x], [agent], width, color=f"C{j}",
                          label=model if x == xs[0] else None)
            if not (isinstance(total, float) and isinstance(agent, float)):
                right.annotate(f"agent {_cost_label(agent)}\nall {_cost_label(total)}",
                               (x, 0.0), ha="center", va="bottom", fontsize="x-small",
                               rotation=90)
    priced = [r[k] for r in costs for k in ("cost_agent", "cost_total")
              if isinstance(r[k], float)]
    if priced and not any(priced):
        right.text(0.5, 0.5, "every call was free: $0.000 per episode", ha="center",
                   va="center", transform=right.transAxes)
    for axes in (left, right):
        axes.set_xticks(range(len(conditions)), conditions)
    left.set_ylabel("agent actions per episode")
    left.set_title("Effort: the evaluated agent's actions")
    left.legend(fontsize="small")
    right.set_ylabel("USD per episode")
    right.set_title("Cost: agent's calls (dark) within all calls (light)")
    return _save(figure, path)


def figure3(outcomes: Sequence[Row], processes: Sequence[Row], path: Path) -> Path:
    """Outcome composition per cell (top) and process completion per cell (bottom)."""
    figure = Figure(figsize=(11, 7.5), layout="constrained")
    top, bottom = figure.subplots(2, 1)
    labels = [f"{r['model']}\n{r['condition']}" for r in outcomes]
    base = [0.0] * len(outcomes)
    for outcome, colour in OUTCOME_COLOURS.items():
        shares = [r[outcome] / r["n_trials"] for r in outcomes]
        top.bar(range(len(outcomes)), shares, bottom=base, color=colour, label=outcome)
        base = [b + s for b, s in zip(base, shares, strict=True)]
    top.set_xticks(range(len(outcomes)), labels, fontsize="x-small")
    top.set_ylabel("share of trials")
    top.set_title("Outcome composition per cell")
    top.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    width = 0.8 / len(PROCESS_LABELS)
    for j, (name, label) in enumerate(PROCESS_LABELS.items()):
        xs = [i - 0.4 + width * (j + 0.5) for i, r in enumerate(processes) if r[name] is not None]
        ys = [r[name] for r in processes if r[name] is not None]
        bottom.bar(xs, ys, width=width, label=label, color=f"C{j}")
    bottom.set_xticks(
        range(len(processes)),
        [f"{r['model']}\n{r['condition']}" for r in processes],
        fontsize="x-small",
    )
    bottom.set_ylim(0, 1.05)
    bottom.set_ylabel("share of required items")
    bottom.set_title("Coordination processes per cell (absent processes not drawn)")
    bottom.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(figure, path)


def table1_figure(interactions: Sequence[Row], path: Path) -> Path:
    """Forest plot of the pairwise interactions, annotated with exact and Holm p."""
    pairs = [r for r in interactions if r["lower"] is not None]
    figure = Figure(figsize=(8, 0.6 * max(3, len(pairs)) + 1.2), layout="constrained")
    axes = figure.subplots()
    if not pairs:
        _empty(axes, "no interactions (need two models and two tasks in both conditions)")
        return _save(figure, path)
    for i, row in enumerate(reversed(pairs)):
        axes.errorbar(
            [row["mean_delta"]],
            [i],
            xerr=[[row["mean_delta"] - row["lower"]], [row["upper"] - row["mean_delta"]]],
            fmt="o",
            capsize=3,
            color="C0",
        )
        axes.annotate(
            f"p={row['p_exact']:.3g}, Holm {row['p_holm']:.3g}",
            (row["upper"], i),
            xytext=(6, -3),
            textcoords="offset points",
            fontsize="small",
        )
    axes.axvline(0.0, color="grey", linewidth=0.8)
    axes.margins(x=0.35)
    axes.set_yticks(range(len(pairs)), [r["pair"] for r in reversed(pairs)], fontsize="small")
    axes.set_xlabel("mean difference-in-differences (indirect - social), 95% t interval")
    dispersion = next((r for r in interactions if r["lower"] is None), None)
    title = "Model-by-condition interactions"
    if dispersion is not None:
        title += f" (dispersion {dispersion['mean_delta']:+.3f}, p={dispersion['p_exact']:.3g})"
    axes.set_title(title, fontsize="medium")
    return _save(figure, path)


def table2_figure(estimates: Sequence[Row], path: Path) -> Path:
    """Tasks needed per condition to resolve its largest model gap, with implied cost."""
    figure = Figure(figsize=(7, 4), layout="constrained")
    axes = figure.subplots()
    rows = [r for r in estimates if r["tasks"] is not None]
    if not rows:
        _empty(axes, "no resolvable gap (every largest gap is zero or too few models)")
        return _save(figure, path)
    axes.bar(range(len(rows)), [r["tasks"] for r in rows], color="C1")
    for i, row in enumerate(rows):
        cost = row["implied_cost"]
        shown = f"\n${cost:,.0f}" if isinstance(cost, float) else f"\n{cost} cost"
        note = f"{row['tasks']} tasks" + (shown if cost is not None else "")
        axes.annotate(note, (i, row["tasks"]), ha="center", va="bottom", fontsize="small")
    axes.set_xticks(range(len(rows)), [r["condition"] for r in rows])
    axes.set_yscale("log")
    axes.set_ylim(1, 4 * max(r["tasks"] for r in rows))
    axes.set_ylabel("tasks for 80% power (log scale)")
    axes.set_title("Post-hoc corpus size to resolve each condition's largest gap")
    return _save(figure, path)
