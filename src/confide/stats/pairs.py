"""Model pairs within one condition: task-level gaps and their paired t intervals.

Incognita section 6.1: "treating each pair of models as a paired comparison over the
eighteen tasks"; a pair separates when its two-sided 95 percent t interval excludes zero.
These counts are descriptive (no multiplicity correction, section 5 "Estimator").

Input convention shared with the interaction, concordance and extrapolation modules: a
score matrix of shape (n_models, n_tasks) of task-level means (see `TaskTable.matrix`),
with one label per row. Pairs are taken in row order, (i, j) for i < j, and every gap is
row i minus row j.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict

from confide.stats._validate import as_matrix, check_labels, check_positive_int
from confide.stats.intervals import TInterval, t_interval


class PairComparison(BaseModel):
    """One model pair's paired difference over tasks in one condition (first minus second)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    first: str
    second: str
    difference: TInterval

    @property
    def separates(self) -> bool:
        """The pair is resolved: its interval excludes zero."""
        return self.difference.excludes_zero


def pair_indices(n_models: int) -> list[tuple[int, int]]:
    """Row-index pairs (i, j), i < j, in the order every pairwise table uses (Incognita s.6.1)."""
    return list(
        itertools.combinations(range(check_positive_int("n_models", n_models, minimum=2)), 2)
    )


def pair_gaps(scores: ArrayLike) -> NDArray[np.float64]:
    """Per-task gaps of each model pair (Incognita s.6.1): (n_pairs, n_tasks), row i - row j."""
    s = as_matrix("scores", scores, min_rows=2)
    pairs = pair_indices(s.shape[0])
    first = np.array([i for i, _ in pairs])
    second = np.array([j for _, j in pairs])
    gaps: NDArray[np.float64] = s[first] - s[second]
    return gaps


def pairwise_comparisons(
    scores: ArrayLike, models: Sequence[str], *, confidence: float = 0.95
) -> list[PairComparison]:
    """Paired t interval for every model pair in one condition (Incognita s.6.1, fig. 4)."""
    s = as_matrix("scores", scores, min_rows=2, min_cols=2)
    names = check_labels("models", models, count=s.shape[0])
    return [
        PairComparison(
            first=names[i], second=names[j], difference=t_interval(gap, confidence=confidence)
        )
        for (i, j), gap in zip(pair_indices(len(names)), pair_gaps(s), strict=True)
    ]
