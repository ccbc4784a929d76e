"""Within-condition model pairs (Incognita s.6.1 separability)."""

from __future__ import annotations

import numpy as np
import pytest

from confide.stats import (
    StatsError,
    pair_gaps,
    pair_indices,
    paired_difference,
    pairwise_comparisons,
)


def test_pairs_in_row_order_with_paired_intervals() -> None:
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, (4, 18)) / 3
    assert pair_indices(4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    gaps = pair_gaps(scores)
    assert gaps.shape == (6, 18)
    np.testing.assert_allclose(gaps[4], scores[1] - scores[3])
    rows = pairwise_comparisons(scores, ["m1", "m2", "m3", "m4"])
    assert [(r.first, r.second) for r in rows][2] == ("m1", "m4")
    assert rows[2].difference == paired_difference(scores[0], scores[3])


def test_separates_is_interval_excluding_zero() -> None:
    scores = np.array([[1.0, 1.0, 1.0, 0.9], [0.0, 0.1, 0.0, 0.0], [0.9, 0.1, 1.0, 0.0]])
    rows = pairwise_comparisons(scores, ["a", "b", "c"])
    assert rows[0].separates
    assert not rows[1].separates and not rows[2].separates


def test_errors() -> None:
    with pytest.raises(StatsError, match="n_models must be an integer >= 2; got 1"):
        pair_indices(1)
    with pytest.raises(StatsError, match="scores needs at least 2 rows and 2 columns"):
        pairwise_comparisons(np.ones((2, 1)), ["a", "b"])
    with pytest.raises(StatsError, match="models must list 2 labels"):
        pairwise_comparisons(np.ones((2, 3)), "ab")
