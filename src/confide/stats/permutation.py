"""Exact task-blocked sign-flip tests, with a seeded Monte Carlo fallback for many tasks.

Incognita section 6.1 and appendix B.1: after averaging repetitions within a task, the
two condition labels are exchanged within each task. For any per-task statistic that is
antisymmetric in the two labels (a paired difference, a model-pair
difference-in-differences, the dispersion contrast) that exchange flips the sign of the
task's value, so the null distribution is the set of all 2^n sign patterns.

Test statistic and p-value convention: the statistic is the task mean; the two-sided
p-value is the share of sign patterns whose |mean| is at least the observed |mean|.
The observed pattern (all +1) is one of the patterns, so the observed statistic is
always counted and p lies in (0, 1]. Ties are judged with a relative tolerance of
1e-9 * sum(|values|), so sums that differ only by floating-point rounding count as equal;
a task with value 0 simply doubles every pattern (it is still enumerated).

Exact enumeration: all 2^n patterns are counted without listing them one by one. The
tasks are split into two halves; the 2^a and 2^b signed sums of each half are built by
doubling (sums -> [sums + x, sums - x]), one half is sorted, and for every sum of the
other half `searchsorted` counts the partners that reach the threshold. The count is
exactly the number of the 2^n patterns reaching it; the cost is O(2^(n/2) log 2^(n/2)).
This stays fast up to `EXACT_MAX_N` = 40 tasks (two arrays of 2^20 sums).

Monte Carlo fallback (n > max_exact_n): `n_resamples` independent uniform sign patterns
from the caller's seed; p = (1 + #reaching) / (1 + n_resamples), which again counts the
observed statistic and keeps p in (0, 1].
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict

from confide.stats._validate import (
    SeedLike,
    StatsError,
    as_vector,
    check_positive_int,
    generator,
)

EXACT_MAX_N = 40
"""Largest number of tasks tested by exact enumeration by default (2^40 patterns)."""

DEFAULT_RESAMPLES = 100_000
"""Monte Carlo sign patterns drawn above `max_exact_n` unless told otherwise."""

_BATCH = 4096
_RELATIVE_TOLERANCE = 1e-9


class SignFlipResult(BaseModel):
    """Outcome of a two-sided task-blocked sign-flip test."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    statistic: float
    """Observed task mean."""
    p_value: float
    """Two-sided p-value, observed statistic included; in (0, 1]."""
    n_tasks: int
    exact: bool
    """True when all 2^n_tasks patterns were enumerated."""
    n_permutations: int
    """Patterns counted: 2^n_tasks when exact, else the Monte Carlo draws."""
    n_extreme: int
    """Patterns whose |mean| reached the observed |mean| (observed included when exact)."""


def _signed_sums(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """All 2^len(x) sums of +-x, by doubling."""
    sums = np.zeros(1)
    for v in x:
        sums = np.concatenate((sums + v, sums - v))
    return sums


def _exact_count(x: NDArray[np.float64], threshold: float) -> int:
    """Number of the 2^n sign patterns with |sum| >= threshold (threshold > 0)."""
    half = x.size // 2
    left = _signed_sums(x[:half])
    right = np.sort(_signed_sums(x[half:]))
    upper = right.size - np.searchsorted(right, threshold - left, side="left")
    lower = np.searchsorted(right, -threshold - left, side="right")
    return int(upper.sum() + lower.sum())


def _monte_carlo_count(
    x: NDArray[np.float64], threshold: float, n_resamples: int, rng: np.random.Generator
) -> int:
    """Number of `n_resamples` random sign patterns with |sum| >= threshold."""
    count = 0
    done = 0
    while done < n_resamples:
        size = min(_BATCH, n_resamples - done)
        signs = rng.integers(0, 2, size=(size, x.size), dtype=np.int8) * 2 - 1
        count += int((np.abs(signs @ x) >= threshold).sum())
        done += size
    return count


def sign_flip_test(
    values: ArrayLike,
    *,
    max_exact_n: int = EXACT_MAX_N,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: SeedLike | None = None,
) -> SignFlipResult:
    """Two-sided task-blocked sign-flip test of mean(values) = 0 (Incognita s.6.1, B.1).

    `values` holds one antisymmetric per-task statistic per task (repetitions averaged).
    Exact when `len(values) <= max_exact_n`; otherwise Monte Carlo with `n_resamples`
    draws from `seed`, which is then required.
    """
    x = as_vector("values", values)
    limit = check_positive_int("max_exact_n", max_exact_n)
    if limit > EXACT_MAX_N:
        raise StatsError(f"max_exact_n must be <= {EXACT_MAX_N}; got {max_exact_n!r}")
    n = int(x.size)
    observed = float(x.sum())
    scale = float(np.abs(x).sum())
    threshold = abs(observed) - _RELATIVE_TOLERANCE * scale
    if n <= limit:
        total = 2**n
        extreme = total if threshold <= 0.0 else _exact_count(x, threshold)
        return SignFlipResult(
            statistic=observed / n,
            p_value=extreme / total,
            n_tasks=n,
            exact=True,
            n_permutations=total,
            n_extreme=extreme,
        )
    draws = check_positive_int("n_resamples", n_resamples)
    if seed is None:
        raise StatsError(
            f"seed is required: {n} tasks exceed max_exact_n={limit}, so the test is Monte Carlo"
        )
    rng = generator("seed", seed)
    extreme = draws if threshold <= 0.0 else _monte_carlo_count(x, threshold, draws, rng)
    return SignFlipResult(
        statistic=observed / n,
        p_value=(1 + extreme) / (1 + draws),
        n_tasks=n,
        exact=False,
        n_permutations=draws,
        n_extreme=extreme,
    )
