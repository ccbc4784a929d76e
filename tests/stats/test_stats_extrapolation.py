"""Post-hoc corpus-size extrapolation reproduces Incognita Table 2 (appendix B.3)."""

from __future__ import annotations

import numpy as np
import pytest

from confide.stats import StatsError, corpus_size, corpus_size_extrapolation

# (gap sd, largest gap as a multiple of 1/54 -- task means of 3 repetitions over 18 tasks,
#  $ per episode) -> (tasks, implied cost in whole dollars), from Table 2.
TABLE_2 = [
    ((0.334, 5 / 54, 0.252), (104, 314)),
    ((0.312, 3 / 54, 0.467), (249, 1395)),
    ((0.369, 28 / 54, 1.061), (6, 76)),
]


@pytest.mark.parametrize(("inputs", "expected"), TABLE_2)
def test_reproduces_table_2(inputs: tuple[float, float, float], expected: tuple[int, int]) -> None:
    sd, gap, price = inputs
    got = corpus_size(sd, gap, n_models=4, repetitions=3, cost_per_episode=price)
    assert got.tasks == expected[0]
    assert got.episodes == expected[0] * 12
    assert got.implied_cost is not None and int(got.implied_cost) == expected[1]


def test_ceil_rounding_is_conservative() -> None:
    got = [
        corpus_size(sd, gap, n_models=4, repetitions=3, rounding="ceil").tasks
        for (sd, gap, _), _ in TABLE_2
    ]
    assert got == [105, 250, 7]


def test_from_scores_uses_median_sd_and_largest_gap() -> None:
    rng = np.random.default_rng(21)
    scores = rng.integers(0, 4, (4, 18)) / 3
    got = corpus_size_extrapolation(scores, ["a", "b", "c", "d"], repetitions=3)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    sds = sorted(float(np.std(scores[i] - scores[j], ddof=1)) for i, j in pairs)
    gaps = [abs(float(np.mean(scores[i] - scores[j]))) for i, j in pairs]
    assert got.gap_sd == pytest.approx((sds[2] + sds[3]) / 2)
    assert got.largest_gap == pytest.approx(max(gaps))
    i, j = pairs[int(np.argmax(gaps))]
    assert got.largest_pair == ("abcd"[i], "abcd"[j])
    same = corpus_size(got.gap_sd, got.largest_gap, n_models=4, repetitions=3)
    assert got.tasks == same.tasks and got.implied_cost is None


def test_degenerate_arms() -> None:
    identical = np.tile([1.0, 0.0, 1.0], (3, 1))
    got = corpus_size_extrapolation(identical, ["a", "b", "c"], repetitions=3)
    assert got.tasks is None and got.episodes is None and got.tasks_fractional is None
    shifted = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    assert corpus_size_extrapolation(shifted, ["a", "b"], repetitions=1).tasks == 2


def test_errors() -> None:
    with pytest.raises(StatsError, match="rounding must be 'nearest' or 'ceil'; got 'up'"):
        corpus_size(0.3, 0.1, n_models=4, repetitions=3, rounding="up")  # type: ignore[arg-type]
    with pytest.raises(StatsError, match="n_models must be an integer >= 2; got 1"):
        corpus_size(0.3, 0.1, n_models=1, repetitions=3)
    with pytest.raises(StatsError, match=r"gap_sd must be a finite number >= 0; got -0\.1"):
        corpus_size(-0.1, 0.1, n_models=4, repetitions=3)
    with pytest.raises(StatsError, match="largest_gap must be a finite number; got nan"):
        corpus_size(0.3, float("nan"), n_models=4, repetitions=3)
    with pytest.raises(StatsError, match="cost_per_episode must be a finite number >= 0"):
        corpus_size(0.3, 0.1, n_models=4, repetitions=3, cost_per_episode=-1.0)
