"""The paper's tables, as rows, from per-trial analysis rows.

The Incognita paper: Figure 2 (section 6.1: success per model and arm, the native
anchor first, and paired differences between neighbouring arms of the ladder native,
direct, indirect, social), Figure 6 (section 6.3: actions and cost per episode in both
cost scopes), Figure 3 (section 6.2: outcome composition
and process completion per cell; with the effort and cost counts of 6.2-6.3), Table 1
(appendix B.1: model-by-condition interactions with exact and Holm p-values, and the
global dispersion test) and Table 2 (appendix B.3: post-hoc corpus-size extrapolation).
Every statistic comes from `confide.stats`; this module only arranges the data.

Estimator (section 5): repetitions are averaged within a task first, then tasks are
averaged (or paired). Decisions where the paper is silent:

- A paired comparison uses the tasks present in every cell it compares (a task whose
  episodes all crashed in one cell drops out of that comparison only); ``n_tasks`` in
  each row says how many were used, and a comparison with fewer than two common tasks is
  left out rather than invented.
- A process absent from a condition stays absent (empty cell), never zero; a trial's
  absent value is skipped when averaging.
- Models appear in the order they first occur in the rows (the experiment's lineup
  order); arms in the order of the paper's ladder (native, direct, indirect, social).
- Table 1 compares Centralized (indirect) with Socially Distributed, the paper's primary
  contrast; the Monte Carlo fallback of the sign-flip test (more than 40 tasks) uses seed
  0, so the tables are reproducible.
- Table 2 prices an episode at the mean recorded cost of every model call in it
  (``cost_total``: agent, customer, desks and judge), the online cost of running it.
- Costs are honest: a cost cell is a number only when every call
  behind it has a price; otherwise it says ``unpriced`` (no trial of the cell is fully
  priced) or ``partial`` (some are), never a sum that counts unknown prices as $0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from statistics import mean
from typing import Any

import numpy as np

from confide.envs.incognita.conditions import INCOGNITA_CONDITIONS
from confide.envs.incognita.outputs.design import PAPER_CONDITIONS
from confide.envs.incognita.outputs.failures import FailureType
from confide.envs.incognita.outputs.trials import PROCESSES, TrialRow
from confide.llm.pricing import cost_status
from confide.stats import (
    corpus_size_extrapolation,
    dispersion_test,
    paired_difference,
    pairwise_interactions,
)

Row = dict[str, Any]
Cell = tuple[str, str]
BASELINE, TREATMENT = "indirect", "social"
TABLE_SEED = 0


def models_of(rows: Sequence[TrialRow]) -> list[str]:
    """Models in first-seen order."""
    return list(dict.fromkeys(r.model for r in rows))


def conditions_of(rows: Sequence[TrialRow]) -> list[str]:
    """Conditions present, in the paper's order (others after, sorted)."""
    present = {r.condition for r in rows}
    known = [c for c in PAPER_CONDITIONS if c in present]
    return known + sorted(present - set(PAPER_CONDITIONS))


def task_values(
    rows: Sequence[TrialRow], value: Callable[[TrialRow], float | None]
) -> dict[Cell, dict[str, float]]:
    """(model, condition) -> task -> mean over repetitions of the non-absent values."""
    collected: dict[Cell, dict[str, list[float]]] = {}
    for row in rows:
        x = value(row)
        if x is not None:
            tasks = collected.setdefault((row.model, row.condition), {})
            tasks.setdefault(row.task, []).append(float(x))
    return {
        cell: {task: mean(xs) for task, xs in sorted(tasks.items())}
        for cell, tasks in collected.items()
    }


def success_value(row: TrialRow) -> float:
    """The trial's final verdict as 0/1."""
    return float(row.success)


def _attribute(name: str) -> Callable[[TrialRow], float | None]:
    def value(row: TrialRow) -> float | None:
        x = getattr(row, name)
        return None if x is None else float(x)

    return value


def common_tasks(cells: Sequence[dict[str, float]]) -> list[str]:
    """The tasks every cell has, sorted (the tasks of a paired comparison)."""
    if not cells:
        return []
    shared = set(cells[0])
    for tasks in cells[1:]:
        shared &= set(tasks)
    return sorted(shared)


def _cell_mean(tasks: dict[str, float] | None) -> float | None:
    return mean(tasks.values()) if tasks else None


# ----- Figure 2 ----------------------------------------------------------------------------


def success_table(rows: Sequence[TrialRow]) -> list[Row]:
    """Figure 2, left: task-level success of every (model, condition)."""
    values = task_values(rows, success_value)
    trials: dict[Cell, int] = {}
    for row in rows:
        trials[(row.model, row.condition)] = trials.get((row.model, row.condition), 0) + 1
    return [
        {
            "model": model,
            "condition": condition,
            "success": _cell_mean(values.get((model, condition))),
            "n_tasks": len(values.get((model, condition), {})),
            "n_trials": trials.get((model, condition), 0),
        }
        for model in models_of(rows)
        for condition in conditions_of(rows)
        if (model, condition) in trials
    ]


def neighbour_differences(rows: Sequence[TrialRow]) -> list[Row]:
    """Figure 2, right: per model, earlier minus later neighbouring condition, paired over
    tasks, with the two-sided 95% t interval (positive: lower success in the later one)."""
    values = task_values(rows, success_value)
    conditions = conditions_of(rows)
    out: list[Row] = []
    for model in models_of(rows):
        for first, second in pairwise(conditions):
            a, b = values.get((model, first)), values.get((model, second))
            tasks = common_tasks([a, b]) if a is not None and b is not None else []
            if a is None or b is None or len(tasks) < 2:
                continue
            diff = paired_difference([a[t] for t in tasks], [b[t] for t in tasks])
            out.append(
                {
                    "model": model,
                    "contrast": f"{first} - {second}",
                    "first": first,
                    "second": second,
                    "estimate": diff.estimate,
                    "lower": diff.lower,
                    "upper": diff.upper,
                    "half_width": diff.half_width,
                    "sd": diff.sd,
                    "n_tasks": diff.n,
                    "excludes_zero": diff.excludes_zero,
                }
            )
    return out


# ----- Figure 3 ----------------------------------------------------------------------------


def outcome_table(rows: Sequence[TrialRow]) -> list[Row]:
    """Figure 3, outcomes: trials per cell that succeeded or failed with each type; the
    no-action total (types 1-3); and which side's facts the ``requested_but_not_obtained``
    trials lack (section 6.2: service side only, customer side only, both). The native
    arm has no failure types (section 4 defines them for the three conditions)."""
    out: list[Row] = []
    for model in models_of(rows):
        for condition in conditions_of(rows):
            cell = [r for r in rows if r.model == model and r.condition == condition]
            if not cell or condition not in INCOGNITA_CONDITIONS:  # no failure types
                continue
            counts: Row = {"model": model, "condition": condition, "n_trials": len(cell)}
            counts["success"] = sum(r.success for r in cell)
            for failure in FailureType:
                counts[failure.value] = sum(r.failure is failure for r in cell)
            counts["no_action"] = sum(
                counts[f.value]
                for f in (
                    FailureType.NEVER_REQUESTED,
                    FailureType.REQUESTED_NOT_OBTAINED,
                    FailureType.OBTAINED_NOT_DELIVERED,
                )
            )
            stalled = [r for r in cell if r.failure is FailureType.REQUESTED_NOT_OBTAINED]
            counts["rno_service_only"] = sum(
                r.missing_service > 0 and r.missing_customer == 0 for r in stalled
            )
            counts["rno_customer_only"] = sum(
                r.missing_customer > 0 and r.missing_service == 0 for r in stalled
            )
            counts["rno_both"] = sum(
                r.missing_customer > 0 and r.missing_service > 0 for r in stalled
            )
            out.append(counts)
    return out


EFFORT: tuple[str, ...] = ("unanswerable_questions", "agent_actions")
COSTS: tuple[str, ...] = ("cost_agent", "cost_total")


def costs_status(costs: Sequence[float | None]) -> str | None:
    """`cost_status` of trial costs (None: an unpriced trial)."""
    return cost_status(sum(c is not None for c in costs), len(costs))


def cost_cell(rows: Sequence[TrialRow], name: str) -> float | str | None:
    """The task-level mean of cost `name` over `rows`, or why it has none (see above)."""
    status = costs_status([getattr(r, name) for r in rows])
    if status is not None:
        return status
    return _cell_mean(task_values(rows, _attribute(name)).get((rows[0].model, rows[0].condition)))


def process_table(rows: Sequence[TrialRow]) -> list[Row]:
    """Figure 3, processes: task-level completion of each coordination process per cell,
    with the effort and cost counts per episode (absent: None)."""
    columns = {name: task_values(rows, _attribute(name)) for name in (*PROCESSES, *EFFORT)}
    out: list[Row] = []
    for model in models_of(rows):
        for condition in conditions_of(rows):
            if not any(r.model == model and r.condition == condition for r in rows):
                continue
            row: Row = {
                "model": model,
                "condition": condition,
                "execution_name": "execution" if condition == "direct" else "assignment",
            }
            for name, values in columns.items():
                row[name] = _cell_mean(values.get((model, condition)))
            cell = [r for r in rows if r.model == model and r.condition == condition]
            for name in COSTS:
                row[name] = cost_cell(cell, name)
            out.append(row)
    return out


# ----- Figure 6 ----------------------------------------------------------------------------


def cost_table(rows: Sequence[TrialRow]) -> list[Row]:
    """Figure 6 (section 6.3, "Appendix Figure 6 shows both cost scopes"): per model and
    arm, the evaluated agent's actions per episode and the cost per episode in both
    scopes -- the agent's own calls (``cost_agent``) and every call of the episode
    (``cost_total``: agent, customer or native user, gate, desks and judge) -- as
    task-level means, with the success of the cell beside them. The costs are those of
    the run's results.csv (``seat_cost_usd`` and ``episode_cost_usd``: the same model
    calls of the same traces), read from the trial rows so the figure can be redrawn from
    ``incognita_trials.csv``; a cell over unpriced calls says ``unpriced`` or
    ``partial``."""
    actions = task_values(rows, _attribute("agent_actions"))
    success = task_values(rows, success_value)
    out: list[Row] = []
    for model in models_of(rows):
        for condition in conditions_of(rows):
            cell = [r for r in rows if r.model == model and r.condition == condition]
            if not cell:
                continue
            out.append(
                {
                    "model": model,
                    "condition": condition,
                    "n_trials": len(cell),
                    "success": _cell_mean(success.get((model, condition))),
                    "agent_actions": _cell_mean(actions.get((model, condition))),
                    "cost_agent": cost_cell(cell, "cost_agent"),
                    "cost_total": cost_cell(cell, "cost_total"),
                }
            )
    return out


# ----- Table 1 -----------------------------------------------------------------------------


def score_matrix(
    values: dict[Cell, dict[str, float]], models: Sequence[str], condition: str, tasks: list[str]
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Models x tasks task-level means of one condition (the `confide.stats` convention)."""
    return np.array([[values[(m, condition)][t] for t in tasks] for m in models])


def interaction_table(
    rows: Sequence[TrialRow], baseline: str = BASELINE, treatment: str = TREATMENT
) -> list[Row]:
    """Table 1 (appendix B.1): every model pair's difference-in-differences
    (baseline - treatment of the first, minus that of the second), its descriptive t
    interval, exact sign-flip and Holm p; then the global dispersion test."""
    values = task_values(rows, success_value)
    models = [m for m in models_of(rows) if (m, baseline) in values and (m, treatment) in values]
    tasks = common_tasks([values[(m, c)] for m in models for c in (baseline, treatment)])
    if len(models) < 2 or len(tasks) < 2:
        return []
    base = score_matrix(values, models, baseline, tasks)
    treat = score_matrix(values, models, treatment, tasks)
    out: list[Row] = []
    for item in pairwise_interactions(base, treat, models, seed=TABLE_SEED):
        out.append(
            {
                "pair": f"{item.first} - {item.second}",
                "first": item.first,
                "second": item.second,
                "mean_delta": item.interval.estimate,
                "lower": item.interval.lower,
                "upper": item.interval.upper,
                "p_exact": item.test.p_value,
                "p_holm": item.p_holm,
                "exact": item.test.exact,
                "n_tasks": item.test.n_tasks,
            }
        )
    dispersion = dispersion_test(base, treat, seed=TABLE_SEED)
    out.append(
        {
            "pair": "dispersion (all models)",
            "first": "",
            "second": "",
            "mean_delta": dispersion.statistic,
            "lower": None,
            "upper": None,
            "p_exact": dispersion.p_value,
            "p_holm": None,
            "exact": dispersion.exact,
            "n_tasks": dispersion.n_tasks,
        }
    )
    return out


# ----- Table 2 -----------------------------------------------------------------------------


def corpus_size_table(rows: Sequence[TrialRow]) -> list[Row]:
    """Table 2 (appendix B.3): per condition, the plug-in corpus size that resolves its
    largest observed model gap at 80% power, and its implied online cost. The paper's
    table has the three conditions only, not the native anchor."""
    values = task_values(rows, success_value)
    out: list[Row] = []
    for condition in conditions_of(rows):
        if condition not in INCOGNITA_CONDITIONS:
            continue
        models = [m for m in models_of(rows) if (m, condition) in values]
        tasks = common_tasks([values[(m, condition)] for m in models])
        if len(models) < 2 or len(tasks) < 2:
            continue
        cell_rows = [r for r in rows if r.condition == condition and r.model in models]
        per_cell: dict[tuple[str, str], int] = {}
        for r in cell_rows:
            per_cell[(r.model, r.task)] = per_cell.get((r.model, r.task), 0) + 1
        repetitions = max(1, round(mean(per_cell.values())))
        unpriced = costs_status([r.cost_total for r in cell_rows])
        known = [r.cost_total for r in cell_rows if r.cost_total is not None]
        price = None if unpriced else mean(known)
        estimate = corpus_size_extrapolation(
            score_matrix(values, models, condition, tasks),
            models,
            repetitions=repetitions,
            cost_per_episode=price,
        )
        pair = estimate.largest_pair
        out.append(
            {
                "condition": condition,
                "gap_sd": estimate.gap_sd,
                "largest_gap": estimate.largest_gap,
                "largest_pair": f"{pair[0]} - {pair[1]}" if pair else "",
                "tasks": estimate.tasks,
                "tasks_fractional": estimate.tasks_fractional,
                "models": len(models),
                "repetitions": repetitions,
                "episodes": estimate.episodes,
                "cost_per_episode": unpriced or estimate.cost_per_episode,
                "implied_cost": unpriced or estimate.implied_cost,
                "n_tasks_observed": len(tasks),
            }
        )
    return out
