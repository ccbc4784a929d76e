"""Two-sided t intervals for task-level (paired) differences, and Wilson score intervals.

Incognita section 5, "Estimator": comparisons are per-task paired differences with a
two-sided 95 percent t interval on the task differences (n - 1 degrees of freedom);
no endpoint error bars are drawn because task difficulty cancels only inside a paired
difference. Whether the interval excludes zero is the 5 percent two-sided t test.

Decisions where the paper is silent: with zero spread (all differences equal) the
interval collapses to the point, which is what the formula gives and what a reader of
a ceiling-bound arm expects; at least two tasks are required because one task has no
spread estimate. Wilson intervals are offered for endpoint rates (a single cell's
success over trials) when a report needs one; they are not used for comparisons.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

from confide.stats._validate import StatsError, as_vector, check_open_unit


class Interval(BaseModel):
    """A point estimate with a two-sided interval at the given confidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    estimate: float
    lower: float
    upper: float
    confidence: float

    @property
    def excludes_zero(self) -> bool:
        """True when zero lies strictly outside the interval (a two-sided test rejects)."""
        return self.lower > 0.0 or self.upper < 0.0


class TInterval(Interval):
    """A one-sample t interval on task-level values (usually paired differences)."""

    n: int
    sd: float
    se: float
    df: int
    half_width: float


def t_interval(values: ArrayLike, *, confidence: float = 0.95) -> TInterval:
    """Mean of task-level values with a two-sided Student t interval (Incognita s.5).

    `values` is a 1-D array of per-task numbers (one per task, repetitions already
    averaged), e.g. paired differences or difference-in-differences (appendix B.1).
    """
    x = as_vector("values", values, min_len=2)
    level = check_open_unit("confidence", confidence)
    n = int(x.size)
    mean = float(x.mean())
    sd = float(x.std(ddof=1))
    se = sd / math.sqrt(n)
    from scipy import stats as sps  # here: importing confide.stats (the runner does) stays cheap

    crit = float(sps.t.ppf(0.5 + level / 2.0, n - 1))
    half = crit * se
    return TInterval(
        estimate=mean,
        lower=mean - half,
        upper=mean + half,
        confidence=level,
        n=n,
        sd=sd,
        se=se,
        df=n - 1,
        half_width=half,
    )


def paired_difference(a: ArrayLike, b: ArrayLike, *, confidence: float = 0.95) -> TInterval:
    """Mean of the per-task differences `a - b` with a two-sided t interval (Incognita s.5).

    `a` and `b` are task-level vectors in the same task order (e.g. one model under two
    conditions, or two models under one condition).
    """
    x = as_vector("a", a, min_len=2)
    y = as_vector("b", b, min_len=2)
    if x.shape != y.shape:
        raise StatsError(f"a and b must be paired per task; got lengths {x.size} and {y.size}")
    return t_interval(x - y, confidence=confidence)


def wilson_interval(successes: int, trials: int, *, confidence: float = 0.95) -> Interval:
    """Wilson (1927) score interval for one binomial rate, e.g. a cell's trial success.

    Incognita s.5 deliberately draws no endpoint error bars on task-level comparisons;
    this interval is for reports of a single rate over trials, never for comparisons.
    """
    if not isinstance(trials, int | np.integer) or isinstance(trials, bool) or trials < 1:
        raise StatsError(f"trials must be an integer >= 1; got {trials!r}")
    if (
        not isinstance(successes, int | np.integer)
        or isinstance(successes, bool)
        or not 0 <= successes <= trials
    ):
        raise StatsError(f"successes must be an integer in [0, trials={trials}]; got {successes!r}")
    level = check_open_unit("confidence", confidence)
    from scipy import stats as sps

    z = float(sps.norm.ppf(0.5 + level / 2.0))
    n = float(trials)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    # The bounds are exactly 0 at k = 0 and 1 at k = n; clamping removes rounding residue.
    lower = 0.0 if successes == 0 else min(p, max(0.0, centre - half))
    upper = 1.0 if successes == trials else max(p, min(1.0, centre + half))
    return Interval(estimate=p, lower=lower, upper=upper, confidence=level)
