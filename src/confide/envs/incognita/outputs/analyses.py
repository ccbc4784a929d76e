"""The paper's analyses beyond its figures and tables, as rows, for runs of two or more models.

Incognita (the Incognita paper): pairwise separability per condition and ceiling removal
(section 6.1), the dispersion test (appendix B.1), split-half concordance and the minimum
detectable effect (6.1), and the two measurement-sensitivity audits of appendix B.2 (the
reader audit of non-reference reads; the output-assertion channel, with the database-only
recompute of the pre-specified contrasts). Every statistic comes from `confide.stats`;
the estimator is section 5's (repetitions averaged within a task, comparisons paired over
the tasks every compared cell has), as in `tables`.

Decisions where the paper is silent:

- a task "all models solve" (or "all fail") has task-level mean 1 (or 0) for every model,
  i.e. every repetition of every model succeeded (failed);
- the minimum detectable effect plugs in the same spread as Table 2 (appendix B.3): the
  median SD of the condition's task-level pair gaps (with the paper's SDs of 0.31-0.37
  and 18 tasks this gives 0.22-0.26, the paper's "about 0.20");
- split-half concordance needs at least four shared tasks (two per half); it uses the
  tables' seed, so a run's analyses are reproducible;
- the database-only recompute covers every neighbouring-condition contrast per model
  (direct - indirect and the primary indirect - social); the native-anchor contrast has
  no counterpart here (the anchor is another harness, see `design`).

Each function returns ``(rows, reason)``: the rows, or none and the reason the run cannot
support the analysis, which `write` records in ``analyses.csv`` so the report says why an
analysis is missing instead of leaving it out silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from statistics import median
from typing import Any

import numpy as np

from confide.envs.incognita.outputs.failures import NO_ACTION, FailureType
from confide.envs.incognita.outputs.tables import (
    BASELINE,
    TABLE_SEED,
    TREATMENT,
    Cell,
    Row,
    common_tasks,
    conditions_of,
    models_of,
    score_matrix,
    success_value,
    task_values,
)
from confide.envs.incognita.outputs.trials import TrialRow
from confide.stats import (
    dispersion_contrast,
    dispersion_test,
    minimum_detectable_effect,
    pair_gaps,
    paired_difference,
    pairwise_comparisons,
    split_half_concordance,
)

Result = tuple[list[Row], str | None]
Matrix = np.ndarray[Any, np.dtype[np.float64]]
CONCORDANCE_SPLITS = 4000
"""Random splits of the task set (section 6.1: "splitting the eighteen tasks at random
4000 times")."""
ONE_MODEL = "the run evaluates one model; this analysis compares two or more"
POWER, ALPHA = 0.8, 0.05


def condition_matrices(
    rows: Sequence[TrialRow], value: Callable[[TrialRow], float] = success_value
) -> dict[str, tuple[list[str], list[str], Matrix]]:
    """Condition -> (models, common tasks, models x tasks matrix of task-level means), for
    conditions with at least two models sharing at least two tasks."""
    values = task_values(rows, value)
    out: dict[str, tuple[list[str], list[str], Matrix]] = {}
    for condition in conditions_of(rows):
        models = [m for m in models_of(rows) if (m, condition) in values]
        tasks = common_tasks([values[(m, condition)] for m in models])
        if len(models) >= 2 and len(tasks) >= 2:
            out[condition] = (models, tasks, score_matrix(values, models, condition, tasks))
    return out


def _no_pairs(rows: Sequence[TrialRow]) -> str:
    if len(models_of(rows)) < 2:
        return ONE_MODEL
    return "no condition has two models sharing two tasks"


def _pair_rows(condition: str, task_set: str, models: list[str], matrix: Matrix) -> list[Row]:
    return [
        {
            "condition": condition,
            "task_set": task_set,
            "pair": f"{c.first} - {c.second}",
            "estimate": c.difference.estimate,
            "lower": c.difference.lower,
            "upper": c.difference.upper,
            "n_tasks": c.difference.n,
            "separates": c.separates,
        }
        for c in pairwise_comparisons(matrix, models)
    ]


def _uncompressed(matrix: Matrix) -> Matrix:
    """The columns (tasks) that not every model solves and not every model fails."""
    keep = ~((matrix == 1.0).all(axis=0) | (matrix == 0.0).all(axis=0))
    return matrix[:, keep]


def separability(rows: Sequence[TrialRow]) -> Result:
    """Section 6.1: every model pair, paired over tasks, per condition; a pair separates
    when its 95% t interval excludes zero (descriptive, no multiplicity correction), on all
    tasks and again with the ceiling and floor tasks removed."""
    out: list[Row] = []
    for condition, (models, _, matrix) in condition_matrices(rows).items():
        out += _pair_rows(condition, "all", models, matrix)
        kept = _uncompressed(matrix)
        if kept.shape[1] >= 2:
            out += _pair_rows(condition, "ceiling removed", models, kept)
    return out, None if out else _no_pairs(rows)


def ceiling_removal(rows: Sequence[TrialRow]) -> Result:
    """Section 6.1, "compression at the ceiling": remove every task that all models solve
    or all fail, and count the separated pairs again."""
    out: list[Row] = []
    for condition, (models, tasks, matrix) in condition_matrices(rows).items():
        kept = _uncompressed(matrix)
        before = pairwise_comparisons(matrix, models)
        after = pairwise_comparisons(kept, models) if kept.shape[1] >= 2 else None
        means = kept.mean(axis=1) if kept.shape[1] else None
        out.append(
            {
                "condition": condition,
                "models": len(models),
                "pairs": len(before),
                "tasks": len(tasks),
                "tasks_kept": int(kept.shape[1]),
                "separated": sum(c.separates for c in before),
                "separated_kept": None if after is None else sum(c.separates for c in after),
                "spread": float(np.ptp(matrix.mean(axis=1))),
                "spread_kept": None if means is None else float(np.ptp(means)),
            }
        )
    return out, None if out else _no_pairs(rows)


def dispersion(rows: Sequence[TrialRow]) -> Result:
    """Appendix B.1: per task, the between-model sum of squares under social access minus
    that under centralized indirect access; its task mean with the exact two-sided
    sign-flip p (one row per task, then the test as the row ``task = all``)."""
    values = task_values(rows, success_value)
    models = [m for m in models_of(rows) if (m, BASELINE) in values and (m, TREATMENT) in values]
    tasks = common_tasks([values[(m, c)] for m in models for c in (BASELINE, TREATMENT)])
    if len(models) < 2 or len(tasks) < 2:
        if len(models_of(rows)) < 2:
            return [], ONE_MODEL
        return [], f"needs two models sharing two tasks in both {BASELINE} and {TREATMENT}"
    base = score_matrix(values, models, BASELINE, tasks)
    treat = score_matrix(values, models, TREATMENT, tasks)
    test = dispersion_test(base, treat, seed=TABLE_SEED)
    out: list[Row] = [
        {"task": task, "contrast": float(x), "p_value": None, "exact": None, "models": len(models)}
        for task, x in zip(tasks, dispersion_contrast(base, treat), strict=True)
    ]
    out.append(
        {
            "task": "all",
            "contrast": test.statistic,
            "p_value": test.p_value,
            "exact": test.exact,
            "models": len(models),
        }
    )
    return out, None


def concordance(rows: Sequence[TrialRow]) -> Result:
    """Section 6.1, reproducibility across halves: over 4000 random splits of the tasks,
    how many pairwise orderings the two halves agree on, against a task-blocked null."""
    out: list[Row] = []
    for condition, (models, tasks, matrix) in condition_matrices(rows).items():
        if len(tasks) < 4:
            continue  # each half needs two tasks
        result = split_half_concordance(
            matrix, models, seed=TABLE_SEED, n_splits=CONCORDANCE_SPLITS
        )
        out.append(
            {
                "condition": condition,
                "models": len(models),
                "tasks": len(tasks),
                "pairs": result.n_pairs,
                "splits": result.n_splits,
                "agreement": result.mean_agreement,
                "null_agreement": result.null_mean_agreement,
                "null_share_reaching": result.null_share_reaching,
            }
        )
    if out:
        return out, None
    return [], ONE_MODEL if len(models_of(rows)) < 2 else "no condition has four shared tasks"


def detectable_effect(rows: Sequence[TrialRow]) -> Result:
    """Section 6.1 and appendix B.3: the smallest paired model gap the design resolves at
    80% power and two-sided alpha 0.05, with the median SD of the condition's task-level
    pair gaps as the plug-in spread; and how many observed gaps fall below it."""
    out: list[Row] = []
    for condition, (_, tasks, matrix) in condition_matrices(rows).items():
        gaps = pair_gaps(matrix)
        sd = float(median(np.std(gaps, axis=1, ddof=1)))
        effect = (
            minimum_detectable_effect(sd, len(tasks), power=POWER, alpha=ALPHA) if sd > 0 else None
        )
        means = np.abs(gaps.mean(axis=1))
        out.append(
            {
                "condition": condition,
                "tasks": len(tasks),
                "gap_sd": sd,
                "mde": effect,
                "largest_gap": float(means.max()),
                "pairs": len(means),
                "pairs_below_mde": None if effect is None else int((means < effect).sum()),
            }
        )
    return out, None if out else _no_pairs(rows)


def _db(row: TrialRow) -> float:
    return float(bool(row.db_pass))


def database_only(rows: Sequence[TrialRow]) -> Result:
    """Appendix B.2: the pre-specified contrasts (per model, each condition minus the next:
    direct - indirect and the primary indirect - social) from the final verdict and from
    the database channel alone, and whether the zero-crossing decision changes."""
    if len(models_of(rows)) < 2:
        return [], ONE_MODEL
    if any(r.db_pass is None for r in rows):
        return [], "some trials record no evaluation event (no database channel to read)"
    final, db = task_values(rows, success_value), task_values(rows, _db)
    out: list[Row] = []
    for model in models_of(rows):
        for first, second in pairwise(conditions_of(rows)):
            cells: list[Cell] = [(model, first), (model, second)]
            if any(c not in final for c in cells):
                continue
            tasks = common_tasks([final[c] for c in cells])
            if len(tasks) < 2:
                continue
            first_cell, second_cell = cells
            a = paired_difference(
                [final[first_cell][t] for t in tasks], [final[second_cell][t] for t in tasks]
            )
            b = paired_difference(
                [db[first_cell][t] for t in tasks], [db[second_cell][t] for t in tasks]
            )
            out.append(
                {
                    "model": model,
                    "contrast": f"{first} - {second}",
                    "n_tasks": a.n,
                    "final": a.estimate,
                    "final_lower": a.lower,
                    "final_upper": a.upper,
                    "database": b.estimate,
                    "database_lower": b.lower,
                    "database_upper": b.upper,
                    "decision_changed": a.excludes_zero != b.excludes_zero,
                }
            )
    return out, None if out else "no model has two conditions sharing two tasks"


def assertion_channel(rows: Sequence[TrialRow]) -> Result:
    """Appendix B.2, second audit: per condition, trials whose card has an operative
    output-assertion channel, and database passes that the channel turns into failures."""
    if len(models_of(rows)) < 2:
        return [], ONE_MODEL
    out: list[Row] = []
    for condition in conditions_of(rows):
        cell = [r for r in rows if r.condition == condition]
        out.append(
            {
                "condition": condition,
                "trials": len(cell),
                "operative": sum(r.outputs_pass is not None for r in cell),
                "database_passes": sum(bool(r.db_pass) for r in cell),
                "failed_on_assertions": sum(bool(r.db_pass) and not r.success for r in cell),
            }
        )
    return out, None


def reader_audit(rows: Sequence[TrialRow]) -> Result:
    """Appendix B.2, first audit: per condition, the ``requested_but_not_obtained`` trials
    with accepted non-reference reads, and how their labels move under the lenient and the
    strict credit (see `audit`); the no-action total before and after."""
    if len(models_of(rows)) < 2:
        return [], ONE_MODEL
    out: list[Row] = []
    stalled = FailureType.REQUESTED_NOT_OBTAINED
    for condition in conditions_of(rows):
        cell = [r for r in rows if r.condition == condition]
        audited = [r for r in cell if r.lenient_failure is not None]
        lenient = [r.lenient_failure or r.failure for r in cell]
        out.append(
            {
                "condition": condition,
                "requested_not_obtained": sum(r.failure is stalled for r in cell),
                "with_nonreference_reads": len(audited),
                "nonreference_reads": sum(r.nonreference_reads for r in audited),
                "lenient_changed": sum(r.lenient_failure is not r.failure for r in audited),
                "lenient_to_obtained_not_delivered": sum(
                    r.lenient_failure is FailureType.OBTAINED_NOT_DELIVERED for r in audited
                ),
                "lenient_to_never_requested": sum(
                    r.lenient_failure is FailureType.NEVER_REQUESTED for r in audited
                ),
                "strict_changed": sum(r.strict_failure is not r.failure for r in audited),
                "no_action": sum(r.failure in NO_ACTION for r in cell),
                "no_action_lenient": sum(f in NO_ACTION for f in lenient),
            }
        )
    return out, None
