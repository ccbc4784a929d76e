"""Seeded percentile bootstrap over tasks."""

from __future__ import annotations

import numpy as np
import pytest

from confide.stats import StatsError, bootstrap_interval, t_interval


def test_same_seed_same_result_different_seed_different() -> None:
    x = np.random.default_rng(0).normal(0.1, 0.3, 18)
    a = bootstrap_interval(x, seed=3, n_resamples=3000)
    assert a == bootstrap_interval(x, seed=3, n_resamples=3000)
    assert a != bootstrap_interval(x, seed=4, n_resamples=3000)
    assert a == bootstrap_interval(x, seed=np.random.default_rng(3), n_resamples=3000)
    assert a.lower < a.estimate < a.upper
    assert a.estimate == pytest.approx(x.mean())


def test_close_to_t_interval_for_normal_data() -> None:
    x = np.random.default_rng(1).normal(0.0, 1.0, 200)
    boot = bootstrap_interval(x, seed=0, n_resamples=4000)
    t = t_interval(x)
    assert boot.lower == pytest.approx(t.lower, abs=0.03)
    assert boot.upper == pytest.approx(t.upper, abs=0.03)


def test_custom_statistic_and_constant_data() -> None:
    got = bootstrap_interval(
        [1.0, 2.0, 3.0, 100.0], seed=0, statistic=lambda m: np.median(m, axis=1)
    )
    assert got.estimate == 2.5 and got.upper <= 100.0
    flat = bootstrap_interval([0.5] * 6, seed=0, n_resamples=100)
    assert (flat.lower, flat.estimate, flat.upper) == (0.5, 0.5, 0.5)


def test_errors() -> None:
    with pytest.raises(StatsError, match=r"one value per resample, shape \(1,\); got shape \(0,\)"):
        bootstrap_interval([1.0, 2.0], seed=0, statistic=lambda m: np.atleast_1d(np.mean(m))[:0])
    with pytest.raises(StatsError, match="n_resamples must be an integer >= 2; got 1"):
        bootstrap_interval([1.0, 2.0], seed=0, n_resamples=1)
    with pytest.raises(StatsError, match="seed must be a non-negative int"):
        bootstrap_interval([1.0, 2.0], seed=True)
