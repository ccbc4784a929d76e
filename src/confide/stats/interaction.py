"""Model-by-condition interactions and the dispersion test (Incognita appendix B.1).

For models A, B and task t, with a baseline condition (the paper: Centralized indirect)
and a treatment condition (the paper: Socially Distributed),

    Delta_AB,t = (S_base,A,t - S_treat,A,t) - (S_base,B,t - S_treat,B,t),

positive when A loses more under the treatment. Each pair gets the mean Delta with a
descriptive two-sided t interval, an exact task-blocked sign-flip p-value, and a Holm
p-value over all pairs of the call (Table 1).

The global dispersion statistic per task is the within-task sum of squared deviations
of the model scores around their task mean, treatment minus baseline; its task mean
is tested with the same sign-flip test. Exchanging the two condition labels within a
task (for all models together) negates both statistics, which is the exchangeability
the test uses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict

from confide.stats._validate import SeedLike, StatsError, as_matrix, check_labels
from confide.stats.intervals import TInterval, t_interval
from confide.stats.multiplicity import holm
from confide.stats.pairs import pair_gaps, pair_indices
from confide.stats.permutation import (
    DEFAULT_RESAMPLES,
    EXACT_MAX_N,
    SignFlipResult,
    sign_flip_test,
)


class InteractionRow(BaseModel):
    """One model pair's difference-in-differences (a row of Incognita Table 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    first: str
    second: str
    interval: TInterval
    """Mean Delta over tasks with its descriptive t interval."""
    test: SignFlipResult
    """Exact (or Monte Carlo) two-sided sign-flip test of mean Delta = 0."""
    p_holm: float
    """Holm-adjusted p over all pairs of the same call."""


def _condition_pair(
    baseline: ArrayLike, treatment: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    base = as_matrix("baseline", baseline, min_rows=2, min_cols=2)
    treat = as_matrix("treatment", treatment, min_rows=2, min_cols=2)
    if base.shape != treat.shape:
        raise StatsError(
            "baseline and treatment must both be (n_models, n_tasks) in the same order; "
            f"got shapes {base.shape} and {treat.shape}"
        )
    return base, treat


def difference_in_differences(baseline: ArrayLike, treatment: ArrayLike) -> NDArray[np.float64]:
    """Per-task Delta for every model pair: shape (n_pairs, n_tasks) (Incognita B.1)."""
    base, treat = _condition_pair(baseline, treatment)
    return pair_gaps(base - treat)


def pairwise_interactions(
    baseline: ArrayLike,
    treatment: ArrayLike,
    models: Sequence[str],
    *,
    confidence: float = 0.95,
    max_exact_n: int = EXACT_MAX_N,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: SeedLike | None = None,
) -> list[InteractionRow]:
    """Table 1 of Incognita B.1: every pair's mean Delta, t interval, exact and Holm p.

    `baseline` and `treatment` are (n_models, n_tasks) task-level score matrices with rows
    labelled by `models`. `seed` is used only if n_tasks exceeds `max_exact_n`.
    """
    base, treat = _condition_pair(baseline, treatment)
    names = check_labels("models", models, count=base.shape[0])
    deltas = difference_in_differences(base, treat)
    tests = [
        sign_flip_test(d, max_exact_n=max_exact_n, n_resamples=n_resamples, seed=seed)
        for d in deltas
    ]
    adjusted = holm([t.p_value for t in tests])
    return [
        InteractionRow(
            first=names[i],
            second=names[j],
            interval=t_interval(d, confidence=confidence),
            test=test,
            p_holm=float(p),
        )
        for (i, j), d, test, p in zip(
            pair_indices(len(names)), deltas, tests, adjusted, strict=True
        )
    ]


def dispersion_contrast(baseline: ArrayLike, treatment: ArrayLike) -> NDArray[np.float64]:
    """Per-task change in between-model sum of squares, treatment minus baseline (B.1)."""
    base, treat = _condition_pair(baseline, treatment)

    def within_task_ss(s: NDArray[np.float64]) -> NDArray[np.float64]:
        ss: NDArray[np.float64] = ((s - s.mean(axis=0)) ** 2).sum(axis=0)
        return ss

    return within_task_ss(treat) - within_task_ss(base)


def dispersion_test(
    baseline: ArrayLike,
    treatment: ArrayLike,
    *,
    max_exact_n: int = EXACT_MAX_N,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: SeedLike | None = None,
) -> SignFlipResult:
    """Global test that between-model dispersion changes with the condition (Incognita B.1).

    The statistic is the task mean of `dispersion_contrast` (the paper reports +0.2222).
    """
    return sign_flip_test(
        dispersion_contrast(baseline, treatment),
        max_exact_n=max_exact_n,
        n_resamples=n_resamples,
        seed=seed,
    )
