"""Several profiles side by side: a comparison table with intervals, paired differences
where two models ran the same tasks, a plot, and a leaderboard across the benchmarks.

Paired: for each model after the first, the difference to the first model over the
tasks both ran, with a seeded bootstrap interval over those tasks (the task is the
unit, as in each profile). The leaderboard ranks the models on every headline metric
(1 = best, by the metric's direction; ties share the better rank) and orders them by
their mean rank over all metrics, with the mean rank per axis beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from confide import atomic
from confide.errors import ConfideError
from confide.evaluate.profile import CONFIDENCE, SEED, Estimate, MetricResult, Profile
from confide.evaluate.render import fmt, interval, metric_name
from confide.stats.bootstrap import bootstrap_interval


class Row(BaseModel):
    """One metric (and group) of one benchmark across the models."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    metric: str
    axis: str
    higher_is_better: bool
    estimates: dict[str, Estimate]
    paired: dict[str, Estimate]
    """Model -> its difference to the first model over their common tasks."""


class Comparison(BaseModel):
    """What `comparison.json` holds."""

    model_config = ConfigDict(frozen=True)

    models: list[str]
    design: list[str]
    rows: list[Row]
    leaderboard: list[dict[str, float | str | int]]


def load_profile(path: Path) -> Profile:
    """A profile.json (or the folder holding one)."""
    file = path / "profile.json" if path.is_dir() else path
    if not file.is_file():
        raise ConfideError(f"{path}: no profile.json (run `confide eval MODEL` first)")
    return Profile.model_validate_json(file.read_text(encoding="utf-8"))


def _key(m: MetricResult) -> tuple[str, str]:
    return (m.benchmark, metric_name(m))


def compare(profiles: Sequence[Profile]) -> Comparison:
    """The comparison of `profiles` (module docstring)."""
    if len(profiles) < 2:
        raise ConfideError("a comparison needs at least two profiles")
    models = [p.model for p in profiles]
    if len(set(models)) != len(models):
        raise ConfideError(f"two profiles of the same model: {', '.join(models)}")
    metrics = {p.model: {_key(m): m for m in p.metrics()} for p in profiles}
    keys = list(dict.fromkeys(k for p in profiles for k in metrics[p.model]))
    rows = []
    for key in keys:
        present = {model: metrics[model][key] for model in models if key in metrics[model]}
        first = next(iter(present.values()))
        rows.append(Row(
            benchmark=key[0], metric=key[1], axis=first.axis,
            higher_is_better=first.higher_is_better,
            estimates={model: m.estimate for model, m in present.items()},
            paired=_paired(models[0], present),
        ))
    return Comparison(models=models, design=[p.design for p in profiles], rows=rows,
                      leaderboard=leaderboard(models, rows))


def _paired(base: str, present: dict[str, MetricResult]) -> dict[str, Estimate]:
    if base not in present:
        return {}
    reference = present[base].estimate.tasks
    paired = {}
    for model, metric in present.items():
        if model == base:
            continue
        common = sorted(set(reference) & set(metric.estimate.tasks))
        diffs = {t: metric.estimate.tasks[t] - reference[t] for t in common}
        if len(diffs) < 2:
            continue
        iv = bootstrap_interval(list(diffs.values()), seed=SEED, confidence=CONFIDENCE)
        paired[model] = Estimate(value=iv.estimate, lower=iv.lower, upper=iv.upper,
                                 tasks=diffs)
    return paired


def leaderboard(models: Sequence[str], rows: Sequence[Row]) -> list[dict[str, float | str | int]]:
    """Mean rank over every metric, and per axis (module docstring)."""
    ranks: dict[str, dict[str, list[int]]] = {m: {} for m in models}
    for row in rows:
        scored = {m: e.value for m, e in row.estimates.items() if e.value is not None}
        for model, value in scored.items():
            better = sum(1 for v in scored.values()
                         if (v > value if row.higher_is_better else v < value))
            ranks[model].setdefault(row.axis, []).append(better + 1)
    board: list[dict[str, float | str | int]] = []
    for model in models:
        every = [r for axis in ranks[model].values() for r in axis]
        entry: dict[str, float | str | int] = {
            "model": model, "metrics": len(every),
            "mean rank": sum(every) / len(every) if every else float("nan")}
        for axis, axis_ranks in sorted(ranks[model].items()):
            entry[f"{axis} rank"] = sum(axis_ranks) / len(axis_ranks)
        board.append(entry)
    board.sort(key=lambda e: (float(e["mean rank"]), str(e["model"])))
    return board


def write_comparison(comparison: Comparison, out: Path) -> list[Path]:
    """comparison.json, comparison.md and comparison.html (with the plot) under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "comparison.json", out / "comparison.md", out / "comparison.html"]
    atomic.write_text(paths[0], comparison.model_dump_json(indent=2) + "\n")
    atomic.write_text(paths[1], markdown(comparison))
    atomic.write_text(paths[2], html(comparison))
    return paths


def markdown(comparison: Comparison) -> str:
    models = comparison.models
    base = models[0]
    lines = ["# Comparison", "", f"Designs: {', '.join(comparison.design)}. Estimates with 95% "
             f"bootstrap intervals over tasks; Δ: paired difference to {base} over the tasks "
             "both ran.", "", "## Leaderboard", ""]
    columns = list(dict.fromkeys(k for e in comparison.leaderboard for k in e))
    lines += ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for entry in comparison.leaderboard:
        lines.append("| " + " | ".join(
            fmt(v) if isinstance(v, float) else str(v) for v in (entry.get(c, "") for c in columns)
        ) + " |")
    lines += ["", "## Metrics", "",
              "| benchmark | metric | " + " | ".join(models) + " | "
              + " | ".join(f"Δ {m}" for m in models[1:]) + " |",
              "|" + " --- |" * (2 + 2 * len(models) - 1)]
    for row in comparison.rows:
        cells = [interval(row.estimates[m]) if m in row.estimates else "-" for m in models]
        cells += [interval(row.paired[m]) if m in row.paired else "-" for m in models[1:]]
        lines.append(f"| {row.benchmark} | {row.metric} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _plot(row: Row, models: Sequence[str]) -> str:
    """One metric: a line per model, its estimate as a dot and its interval as a bar."""
    values = [v for e in row.estimates.values() for v in (e.value, e.lower, e.upper)
              if v is not None]
    if not values:
        return ""
    low, high = min(values), max(values)
    if high == low:
        low, high = low - 1.0, high + 1.0
    width, line = 320.0, 16.0

    def x(v: float) -> float:
        return 10 + (v - low) / (high - low) * (width - 20)

    parts = []
    for i, model in enumerate(models):
        y = line * i + line / 2
        est = row.estimates.get(model)
        if est is None or est.value is None:
            continue
        if est.lower is not None and est.upper is not None:
            parts.append(f'<line x1="{x(est.lower):.1f}" y1="{y}" x2="{x(est.upper):.1f}" '
                         f'y2="{y}" stroke="#555" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(est.value):.1f}" cy="{y}" r="4" '
                     f'fill="{_COLORS[i % len(_COLORS)]}"><title>{escape(model)}: '
                     f"{escape(interval(est))}</title></circle>")
    height = line * len(models)
    return (f'<svg width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} '
            f'{height:.0f}">{"".join(parts)}</svg>')


_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def html(comparison: Comparison) -> str:
    e = escape
    models = comparison.models
    legend = " ".join(f'<span style="color:{_COLORS[i % len(_COLORS)]}">&#9679; {e(m)}</span>'
                      for i, m in enumerate(models))
    out = ["<!doctype html><html lang=en><head><meta charset=utf-8><title>comparison</title>"
           "<style>body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px}"
           "table{border-collapse:collapse;font-size:.9rem}td,th{border-bottom:1px solid #eee;"
           "padding:.3rem .5rem;text-align:left}</style></head><body><h1>Comparison</h1>",
           f"<p>{legend}</p><h2>Leaderboard</h2><table>"]
    columns = list(dict.fromkeys(k for entry in comparison.leaderboard for k in entry))
    out.append("<tr>" + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr>")
    for entry in comparison.leaderboard:
        out.append("<tr>" + "".join(
            f"<td>{e(fmt(v) if isinstance(v, float) else str(v))}</td>"
            for v in (entry.get(c, "") for c in columns)) + "</tr>")
    out.append("</table><h2>Metrics</h2><table><tr><th>benchmark</th><th>metric</th>"
               + "".join(f"<th>{e(m)}</th>" for m in models)
               + "".join(f"<th>&Delta; {e(m)}</th>" for m in models[1:]) + "<th>plot</th></tr>")
    for row in comparison.rows:
        cells = [interval(row.estimates[m]) if m in row.estimates else "-" for m in models]
        cells += [interval(row.paired[m]) if m in row.paired else "-" for m in models[1:]]
        out.append(f"<tr><td>{e(row.benchmark)}</td><td>{e(row.metric)}</td>"
                   + "".join(f"<td>{e(c)}</td>" for c in cells)
                   + f"<td>{_plot(row, models)}</td></tr>")
    out.append("</table></body></html>\n")
    return "\n".join(out)
