"""Seeded percentile bootstrap over tasks.

The Incognita estimator (section 5) uses t intervals; the percentile bootstrap is a
secondary interval for task-level statistics that have no t form (a median gap, a
spread between the best and worst model). Tasks are the resampling unit, consistent
with the task-level aggregation of section 5: `values` holds one number per task with
repetitions already averaged.

The statistic receives a 2-D array with one resample per row and must return one value
per row (e.g. `lambda m: np.median(m, axis=1)`), so it runs vectorised. The interval is
the (1 - confidence)/2 and (1 + confidence)/2 quantiles of the resampled statistics
(linear interpolation); the estimate is the statistic on the original sample.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from confide.stats._validate import (
    SeedLike,
    StatsError,
    as_vector,
    check_open_unit,
    check_positive_int,
    generator,
)
from confide.stats.intervals import Interval

RowStatistic = Callable[[NDArray[np.float64]], NDArray[np.float64]]
"""Maps an (n_resamples, n_tasks) array to n_resamples statistic values."""

DEFAULT_BOOTSTRAP_RESAMPLES = 10_000
_BATCH = 2000


def row_mean(samples: NDArray[np.float64]) -> NDArray[np.float64]:
    """Default bootstrap statistic: the mean of each resample."""
    out: NDArray[np.float64] = samples.mean(axis=1)
    return out


def _apply(statistic: RowStatistic, samples: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.asarray(statistic(samples), dtype=np.float64)
    if out.shape != (samples.shape[0],):
        raise StatsError(
            f"statistic must return one value per resample, shape ({samples.shape[0]},); "
            f"got shape {out.shape}"
        )
    return out


def bootstrap_interval(
    values: ArrayLike,
    *,
    seed: SeedLike,
    statistic: RowStatistic = row_mean,
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval of a task-level statistic (Incognita s.5 task unit)."""
    x = as_vector("values", values, min_len=2)
    draws = check_positive_int("n_resamples", n_resamples, minimum=2)
    level = check_open_unit("confidence", confidence)
    rng = generator("seed", seed)
    estimate = float(_apply(statistic, x[None, :])[0])
    parts = []
    for start in range(0, draws, _BATCH):
        size = min(_BATCH, draws - start)
        parts.append(_apply(statistic, x[rng.integers(0, x.size, size=(size, x.size))]))
    resampled = np.concatenate(parts)
    if not np.isfinite(resampled).all():
        raise StatsError("statistic returned a non-finite value on a resample")
    lower, upper = np.quantile(resampled, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return Interval(estimate=estimate, lower=float(lower), upper=float(upper), confidence=level)
