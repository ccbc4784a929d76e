"""The model-cohort figures of CalBench (the CalBench paper section 4.3, Figures 3 and 4), from a
run's per-seat result rows (results.csv).

- Figure 3, communication efficiency: one point per model seat and game, messages per
  successful participant-meeting (x) against positive excess cost (y), with a dashed
  per-model ordinary-least-squares fit. ``figure3_communication_efficiency.csv``: per
  model, the seat-games, slope and intercept (left empty when the messages do not vary).
- Figure 4, fairness by model and cost setting: the mean fairness cost with a 95% t
  interval across task instances (a task's seat values averaged first, as the caption's
  "across task instances" says). ``figure4_fairness.csv``: per model and setting, the
  mean, interval and task count (no interval below two tasks).

Only model seats (`provider/model` participants) are drawn, as the paper's cohort is; a
run of reference protocols alone writes neither (and loads no plotting library).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any

from confide.core.tables import number, write_table

FIGURE3 = "figure3_communication_efficiency"
FIGURE4 = "figure4_fairness"
SETTINGS = ("uniform", "varied")


def write_cohort_figures(root: Path) -> list[Path]:
    """Figures 3 and 4 (CSV, and PNG under figures/) of the run in `root`; nothing when
    it has no model seat."""
    points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    fairness: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    results = root / "results.csv"
    if not results.is_file():
        return []
    with results.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            model = row.get("participant", "")
            if row.get("status", "ok") != "ok" or "/" not in model:
                continue
            messages, excess = number(row.get("messages_per_meeting")), number(row.get("excess"))
            if messages is not None and excess is not None:
                points[model].append((messages, excess))
            if (fair := number(row.get("fairness"))) is not None:
                fairness[(model, row.get("cost_setting", ""))][row.get("task_id", "")].append(fair)
    if not points and not fairness:
        return []
    fits = [_fit(model, xy) for model, xy in points.items()]
    bars = [_interval(model, setting, tasks) for (model, setting), tasks in fairness.items()]
    bars.sort(
        key=lambda r: (r["model"], SETTINGS.index(r["setting"]) if r["setting"] in SETTINGS else 9)
    )
    written = [
        write_table(root / f"{FIGURE3}.csv", fits),
        write_table(root / f"{FIGURE4}.csv", bars),
    ]
    from confide.envs.calbench.outputs import cohort_plots  # matplotlib: only when drawn

    plots = root / "figures"
    plots.mkdir(exist_ok=True)
    written.append(cohort_plots.figure3(points, fits, plots / f"{FIGURE3}.png"))
    written.append(cohort_plots.figure4(bars, plots / f"{FIGURE4}.png"))
    return written


def _fit(model: str, xy: list[tuple[float, float]]) -> dict[str, Any]:
    """Ordinary least squares of excess on messages per meeting."""
    n = len(xy)
    mx = sum(x for x, _ in xy) / n
    my = sum(y for _, y in xy) / n
    sxx = sum((x - mx) ** 2 for x, _ in xy)
    slope = sum((x - mx) * (y - my) for x, y in xy) / sxx if sxx > 0 else None
    intercept = my - slope * mx if slope is not None else None
    return {"model": model, "seat_games": n, "slope": slope, "intercept": intercept}


def _interval(model: str, setting: str, tasks: dict[str, list[float]]) -> dict[str, Any]:
    """Mean fairness over task instances with its 95% t interval."""
    values = [sum(v) / len(v) for v in tasks.values()]
    row: dict[str, Any] = {
        "model": model,
        "setting": setting,
        "n_tasks": len(values),
        "fairness": sum(values) / len(values),
        "lower": None,
        "upper": None,
    }
    if len(values) >= 2:
        from confide.stats import t_interval

        interval = t_interval(values)
        row["lower"], row["upper"] = interval.lower, interval.upper
    return row
