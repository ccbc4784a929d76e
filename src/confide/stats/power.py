"""Power of the two-sided paired t test over tasks, and its inversions.

Incognita section 6.1 reads design resolution through power: "with eighteen tasks ...
the smallest effect this design resolves at conventional power is about 0.20"
(`minimum_detectable_effect`), and appendix B.3 solves the paired-t power equation for
the number of tasks (`required_tasks`).

Power is computed exactly from the noncentral t distribution: with n tasks, df = n - 1,
critical value c = t_{1 - alpha/2, df} and noncentrality lambda = sqrt(n) * effect / sd,

    power = P(T' >= c) + P(T' <= -c),   T' ~ noncentral t(df, lambda).

The lower tail is evaluated as P(T'' >= c) with T'' ~ nct(df, -lambda), which scipy
computes stably where the direct left tail can return NaN. n may be fractional when
solving (as in statsmodels' TTestPower); at least 2 tasks are needed for df >= 1.
"""

from __future__ import annotations

import math

from confide.stats._validate import StatsError, check_open_unit, check_positive

MIN_TASKS = 2.0
_MAX_TASKS = 1e9


def _power(effect_size: float, n_tasks: float, alpha: float) -> float:
    from scipy import stats as sps  # here: importing confide.stats (the runner does) stays cheap

    df = n_tasks - 1.0
    crit = float(sps.t.ppf(1.0 - alpha / 2.0, df))
    nc = math.sqrt(n_tasks) * effect_size
    value = float(sps.nct.sf(crit, df, nc) + sps.nct.sf(crit, df, -nc))
    if not math.isfinite(value):
        raise StatsError(
            f"power is not computable for effect size {effect_size!r} with {n_tasks!r} tasks"
        )
    return min(1.0, max(0.0, value))


def _check_tasks(n_tasks: float) -> float:
    value = check_positive("n_tasks", n_tasks)
    if value < MIN_TASKS:
        raise StatsError(f"n_tasks must be >= {MIN_TASKS:g}; got {n_tasks!r}")
    return value


def paired_t_power(effect: float, sd: float, n_tasks: float, *, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t test over `n_tasks` tasks (Incognita s.6.1, B.3).

    `effect` is the true mean task-level difference and `sd` the standard deviation of
    the per-task differences.
    """
    if isinstance(effect, bool) or not isinstance(effect, int | float) or not math.isfinite(effect):
        raise StatsError(f"effect must be a finite number; got {effect!r}")
    size = abs(effect) / check_positive("sd", sd)
    return _power(size, _check_tasks(n_tasks), check_open_unit("alpha", alpha))


def required_tasks(effect: float, sd: float, *, power: float = 0.8, alpha: float = 0.05) -> float:
    """Fractional number of tasks at which the paired t test reaches `power` (Incognita B.3).

    Returns `MIN_TASKS` when even two tasks already reach the target. Round or take the
    ceiling as the use requires (see `confide.stats.extrapolation`).
    """
    target = check_open_unit("power", power)
    level = check_open_unit("alpha", alpha)
    if isinstance(effect, bool) or not isinstance(effect, int | float) or not math.isfinite(effect):
        raise StatsError(f"effect must be a finite number; got {effect!r}")
    if effect == 0:
        raise StatsError("effect must be non-zero: no number of tasks resolves a zero effect")
    size = abs(effect) / check_positive("sd", sd)
    if target <= level:
        raise StatsError(f"power must exceed alpha={level}; got {power!r}")
    if _power(size, MIN_TASKS, level) >= target:
        return MIN_TASKS
    upper = 2.0 * MIN_TASKS
    while _power(size, upper, level) < target:
        upper *= 2.0
        if upper > _MAX_TASKS:
            raise StatsError(f"effect {effect!r} with sd {sd!r} needs more than 1e9 tasks")
    from scipy import optimize

    root: float = optimize.brentq(
        lambda n: _power(size, n, level) - target, upper / 2.0, upper, xtol=1e-10
    )
    return root


def minimum_detectable_effect(
    sd: float, n_tasks: float, *, power: float = 0.8, alpha: float = 0.05
) -> float:
    """Smallest mean difference resolved with `power` by `n_tasks` tasks (Incognita s.6.1)."""
    spread = check_positive("sd", sd)
    n = _check_tasks(n_tasks)
    target = check_open_unit("power", power)
    level = check_open_unit("alpha", alpha)
    if target <= level:
        raise StatsError(f"power must exceed alpha={level}; got {power!r}")
    upper = 1.0
    while _power(upper, n, level) < target:
        upper *= 2.0
    from scipy import optimize

    size: float = optimize.brentq(lambda es: _power(es, n, level) - target, 0.0, upper, xtol=1e-12)
    return size * spread
