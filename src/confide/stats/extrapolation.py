"""Post-hoc corpus-size extrapolation (Incognita appendix B.3, Table 2).

For one condition: take the six (generally all) model pairs' per-task gaps, use the
median of their standard deviations as a plug-in sd and the largest absolute mean gap
as the effect, and solve the paired-t power equation for the number of tasks giving
80 percent power at two-sided alpha = 0.05. No multiplicity adjustment and no
uncertainty propagation: it describes the observed resolution of this corpus, it is not
a prospective guarantee. Implied online cost = tasks x models x repetitions x the
recorded price per episode (development, simulation and offline evaluation excluded).

Decisions: power is the exact noncentral-t power (`confide.stats.power`), solved for a
fractional task count. Table 2 reports that count rounded to the nearest integer
(`rounding="nearest"`, the default): with the table's gap sd and gaps (0.334, 5/54),
(0.312, 3/54), (0.369, 28/54) this gives 104, 249 and 6 tasks and the costs $314,
$1,395 and $76. `rounding="ceil"` gives the conservative count a prospective design
would use. A largest gap of zero cannot be resolved by any corpus: the estimate then has
no task count or cost. A zero plug-in sd with a non-zero gap needs the minimum of two tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

from confide.stats._validate import (
    StatsError,
    as_matrix,
    check_labels,
    check_open_unit,
    check_positive,
    check_positive_int,
)
from confide.stats.pairs import pair_gaps, pair_indices
from confide.stats.power import MIN_TASKS, required_tasks

Rounding = Literal["nearest", "ceil"]


class CorpusSizeEstimate(BaseModel):
    """One condition's row of Incognita Table 2."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gap_sd: float
    """Median over model pairs of the sd of per-task gaps (the plug-in sd)."""
    largest_gap: float
    """Largest absolute mean gap over model pairs (the effect to resolve)."""
    largest_pair: tuple[str, str] | None
    """The pair with the largest gap, when computed from scores."""
    power: float
    alpha: float
    tasks_fractional: float | None
    """Solution of the power equation; None when the largest gap is zero."""
    tasks: int | None
    """`tasks_fractional` rounded as requested; None when the largest gap is zero."""
    episodes: int | None
    """tasks x models x repetitions."""
    cost_per_episode: float | None
    implied_cost: float | None


def corpus_size(
    gap_sd: float,
    largest_gap: float,
    *,
    n_models: int,
    repetitions: int,
    cost_per_episode: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    rounding: Rounding = "nearest",
    largest_pair: tuple[str, str] | None = None,
) -> CorpusSizeEstimate:
    """Table 2 row from the plug-in sd and largest gap (Incognita appendix B.3)."""
    sd = check_positive("gap_sd", gap_sd, allow_zero=True)
    gap = abs(_finite_gap(largest_gap))
    models = check_positive_int("n_models", n_models, minimum=2)
    reps = check_positive_int("repetitions", repetitions)
    price = (
        None
        if cost_per_episode is None
        else check_positive("cost_per_episode", cost_per_episode, allow_zero=True)
    )
    target = check_open_unit("power", power)
    level = check_open_unit("alpha", alpha)
    if rounding not in ("nearest", "ceil"):
        raise StatsError(f"rounding must be 'nearest' or 'ceil'; got {rounding!r}")
    fractional: float | None
    if gap == 0.0:
        fractional = None
    elif sd == 0.0:
        fractional = MIN_TASKS
    else:
        fractional = required_tasks(gap, sd, power=target, alpha=level)
    tasks = None
    if fractional is not None:
        tasks = math.ceil(fractional) if rounding == "ceil" else math.floor(fractional + 0.5)
    episodes = None if tasks is None else tasks * models * reps
    return CorpusSizeEstimate(
        gap_sd=sd,
        largest_gap=gap,
        largest_pair=largest_pair,
        power=target,
        alpha=level,
        tasks_fractional=fractional,
        tasks=tasks,
        episodes=episodes,
        cost_per_episode=price,
        implied_cost=None if episodes is None or price is None else episodes * price,
    )


def _finite_gap(value: float) -> float:
    """A finite real gap (sign ignored by the caller)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise StatsError(f"largest_gap must be a finite number; got {value!r}")
    if not math.isfinite(value):
        raise StatsError(f"largest_gap must be a finite number; got {value!r}")
    return float(value)


def corpus_size_extrapolation(
    scores: ArrayLike,
    models: Sequence[str],
    *,
    repetitions: int,
    cost_per_episode: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    rounding: Rounding = "nearest",
) -> CorpusSizeEstimate:
    """Table 2 row for one condition from its (n_models, n_tasks) task-level scores (B.3)."""
    s = as_matrix("scores", scores, min_rows=2, min_cols=2)
    names = check_labels("models", models, count=s.shape[0])
    gaps = pair_gaps(s)
    sds = gaps.std(axis=1, ddof=1)
    means = np.abs(gaps.mean(axis=1))
    best = int(np.argmax(means))
    i, j = pair_indices(len(names))[best]
    return corpus_size(
        float(np.median(sds)),
        float(means[best]),
        n_models=len(names),
        repetitions=repetitions,
        cost_per_episode=cost_per_episode,
        power=power,
        alpha=alpha,
        rounding=rounding,
        largest_pair=(names[i], names[j]),
    )
