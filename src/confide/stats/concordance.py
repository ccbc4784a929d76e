"""Split-half concordance of model orderings over random task splits (Incognita s.6.1).

For one condition's (n_models, n_tasks) task-level scores: split the tasks at random into
two halves, rank the models by their mean in each half, and count how many of the model
pairs are ordered the same way in both halves. The observed statistic is the mean count
over `n_splits` random splits (the paper: 4000 splits, 5.0 of six pairs agreeing under
Socially Distributed access).

Null: within every task the model labels are permuted at random (the task-blocked
exchangeability of the other tests), independently for each split, and the same split
is then scored. The paper compares the observed mean with the null mean (2.9) and reports
the share of null splits whose count reaches the observed mean (14.5 percent);
`null_share_reaching` is that share.

Decisions where the paper is silent: with an odd number of tasks the first half has
floor(n / 2) tasks; a pair counts as agreeing only when it is strictly ordered the same
way in both halves, so a tie in either half is a disagreement (which is why the null
mean sits below half the pairs when scores have ties), and half-means closer than
1e-12 (relative to the score scale) are ties, so float rounding cannot order them;
splits and null relabellings come from one generator seeded by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict

from confide.stats._validate import (
    SeedLike,
    as_matrix,
    check_labels,
    check_positive_int,
    generator,
)
from confide.stats.pairs import pair_indices

DEFAULT_SPLITS = 4000
"""Random splits drawn by default, as in the paper."""

_BATCH = 1000
_TIE = 1e-12


class ConcordanceResult(BaseModel):
    """Split-half agreement of pairwise model orderings, observed and under the null."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_pairs: int
    n_splits: int
    mean_agreement: float
    """Mean number of pairs ordered alike in both halves, over the random splits."""
    null_mean_agreement: float
    """The same under within-task permutation of model labels."""
    null_share_reaching: float
    """Share of null splits whose agreement count is >= `mean_agreement`."""


def _agreements(
    scores: NDArray[np.float64], order: NDArray[np.intp], half: int
) -> NDArray[np.int64]:
    """Agreeing pairs per split; `scores` is (splits, models, tasks), `order` (splits, tasks)."""
    idx = order[:, None, :]
    first = np.take_along_axis(scores, idx[:, :, :half], axis=2).mean(axis=2)
    second = np.take_along_axis(scores, idx[:, :, half:], axis=2).mean(axis=2)
    pairs = pair_indices(scores.shape[1])
    i = np.array([p for p, _ in pairs])
    j = np.array([q for _, q in pairs])
    tie = _TIE * max(1.0, float(np.abs(scores).max()))

    def order_sign(d: NDArray[np.float64]) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.where(np.abs(d) <= tie, 0.0, np.sign(d))
        return out

    sign_first = order_sign(first[:, i] - first[:, j])
    sign_second = order_sign(second[:, i] - second[:, j])
    agree: NDArray[np.int64] = ((sign_first == sign_second) & (sign_first != 0)).sum(axis=1)
    return agree


def split_half_concordance(
    scores: ArrayLike,
    models: Sequence[str],
    *,
    seed: SeedLike,
    n_splits: int = DEFAULT_SPLITS,
) -> ConcordanceResult:
    """Split-half concordance of pairwise orderings with a task-blocked null (Incognita s.6.1).

    `scores` is (n_models, n_tasks) of task-level means, rows labelled by `models`.
    """
    s = as_matrix("scores", scores, min_rows=2, min_cols=2)
    check_labels("models", models, count=s.shape[0])
    splits = check_positive_int("n_splits", n_splits)
    rng = generator("seed", seed)
    n_models, n_tasks = s.shape
    half = n_tasks // 2
    observed_parts: list[NDArray[np.int64]] = []
    null_parts: list[NDArray[np.int64]] = []
    for start in range(0, splits, _BATCH):
        size = min(_BATCH, splits - start)
        order = rng.permuted(np.tile(np.arange(n_tasks), (size, 1)), axis=1)
        stacked = np.broadcast_to(s, (size, n_models, n_tasks))
        observed_parts.append(_agreements(stacked, order, half))
        null_parts.append(_agreements(rng.permuted(stacked, axis=1), order, half))
    observed = np.concatenate(observed_parts)
    null = np.concatenate(null_parts)
    mean = float(observed.mean())
    return ConcordanceResult(
        n_pairs=len(pair_indices(n_models)),
        n_splits=splits,
        mean_agreement=mean,
        null_mean_agreement=float(null.mean()),
        null_share_reaching=float((null >= mean - 1e-12).mean()),
    )
