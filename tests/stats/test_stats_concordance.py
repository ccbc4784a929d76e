"""Split-half concordance over random task splits (Incognita s.6.1)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from confide.stats import StatsError, split_half_concordance


def _all_splits_mean(scores: np.ndarray) -> float:
    """Mean agreement over every ordered half split, enumerated in pure Python."""
    n_models, n_tasks = scores.shape
    half = n_tasks // 2
    totals = []
    for first in itertools.combinations(range(n_tasks), half):
        second = [t for t in range(n_tasks) if t not in first]
        m1 = [sum(scores[m, t] for t in first) / half for m in range(n_models)]
        m2 = [sum(scores[m, t] for t in second) / len(second) for m in range(n_models)]
        agree = 0
        for i, j in itertools.combinations(range(n_models), 2):
            s1 = np.sign(m1[i] - m1[j])
            agree += int(s1 != 0 and s1 == np.sign(m2[i] - m2[j]))
        totals.append(agree)
    return sum(totals) / len(totals)


def test_matches_enumeration_of_all_splits() -> None:
    scores = np.random.default_rng(8).integers(0, 4, (4, 6)) / 3
    got = split_half_concordance(scores, list("abcd"), seed=0, n_splits=6000)
    assert got.mean_agreement == pytest.approx(_all_splits_mean(scores), abs=0.05)


def test_hand_cases() -> None:
    crossing = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert split_half_concordance(crossing, ["a", "b"], seed=1, n_splits=50).mean_agreement == 0
    stable = np.array([[1.0, 1.0], [0.0, 0.0]])
    got = split_half_concordance(stable, ["a", "b"], seed=1, n_splits=50)
    assert got.mean_agreement == 1.0 and got.n_pairs == 1
    # Every split ties both halves or crosses them; 0.2 + 0.6 != 0.7 + 0.1 in floats only.
    rounding = np.array([[0.2, 0.6, 0.6, 0.2], [0.7, 0.1, 0.7, 0.1]])
    assert split_half_concordance(rounding, ["a", "b"], seed=1, n_splits=50).mean_agreement == 0
    tied = np.ones((3, 8))
    got = split_half_concordance(tied, ["a", "b", "c"], seed=1, n_splits=50)
    assert (got.mean_agreement, got.null_mean_agreement, got.null_share_reaching) == (0, 0, 1)


def test_separated_models_agree_and_beat_the_null() -> None:
    rng = np.random.default_rng(3)
    scores = np.arange(4)[:, None] + rng.normal(0, 0.3, (4, 18))
    got = split_half_concordance(scores, list("abcd"), seed=2, n_splits=2000)
    assert got.mean_agreement > 5.9
    assert 2.7 < got.null_mean_agreement < 3.3
    assert got.null_share_reaching < 0.05


def test_seeded_and_reproducible() -> None:
    scores = np.random.default_rng(4).integers(0, 4, (4, 18)) / 3
    a = split_half_concordance(scores, list("abcd"), seed=10, n_splits=1500)
    b = split_half_concordance(scores, list("abcd"), seed=10, n_splits=1500)
    c = split_half_concordance(scores, list("abcd"), seed=11, n_splits=1500)
    assert a == b and a != c
    gen = split_half_concordance(
        scores, list("abcd"), seed=np.random.default_rng(10), n_splits=1500
    )
    assert gen == a


def test_errors() -> None:
    with pytest.raises(StatsError, match="n_splits must be an integer >= 1; got 0"):
        split_half_concordance(np.ones((2, 4)), ["a", "b"], seed=0, n_splits=0)
    with pytest.raises(StatsError, match="seed must be a non-negative int"):
        split_half_concordance(np.ones((2, 4)), ["a", "b"], seed="x")  # type: ignore[arg-type]
    with pytest.raises(StatsError, match="scores needs at least 2 rows and 2 columns"):
        split_half_concordance(np.ones((1, 4)), ["a"], seed=0)
