"""Exact sign-flip test against brute-force enumeration; Monte Carlo fallback seeded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confide.stats import EXACT_MAX_N, StatsError, sign_flip_test

BruteForce = Callable[[Sequence[Fraction], Fraction], int]


def test_hand_computed_small_case() -> None:
    # values 1, 2, 3: sums over the 8 patterns are +-6, +-4, +-2, +-0 -> |sum| >= 6 twice.
    got = sign_flip_test([1.0, 2.0, 3.0])
    assert got.exact and got.n_permutations == 8 and got.n_extreme == 2
    assert got.p_value == 0.25 and got.statistic == pytest.approx(2.0)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(min_value=-6, max_value=6), min_size=1, max_size=10))
def test_exact_count_equals_brute_force_enumeration(
    brute_force: BruteForce, numerators: list[int]
) -> None:
    # Multiples of 1/6, like task means of 3 repetitions differenced: ties are exact in
    # Fraction arithmetic and must be counted the same way by the float implementation.
    exact = [Fraction(k, 6) for k in numerators]
    got = sign_flip_test([k / 6 for k in numerators])
    assert got.exact
    assert got.n_extreme == brute_force(exact, Fraction(0))
    assert got.p_value == got.n_extreme / 2 ** len(numerators)
    assert 0.0 < got.p_value <= 1.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1, max_value=1, allow_nan=False, allow_subnormal=False),
        min_size=1,
        max_size=10,
    )
)
def test_exact_on_real_values_matches_brute_force(
    brute_force: BruteForce, values: list[float]
) -> None:
    # The documented tie rule in exact arithmetic: |S| >= |T| - 1e-9 * sum(|x|).
    exact = [Fraction(v) for v in values]
    tolerance = Fraction(1, 10**9) * sum(abs(v) for v in exact)
    got = sign_flip_test(values)
    assert got.n_extreme == brute_force(exact, tolerance)


def test_all_zero_values_give_p_one() -> None:
    got = sign_flip_test([0.0, 0.0, 0.0])
    assert got.p_value == 1.0 and got.n_extreme == 8


def test_invariances() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, 14) / 3
    base = sign_flip_test(x).p_value
    assert sign_flip_test(-x).p_value == base
    assert sign_flip_test(x[::-1]).p_value == base
    assert sign_flip_test(7.5 * x).p_value == base
    signs = rng.choice([-1.0, 1.0], x.size)
    # Flipping some tasks changes the data, but not the null distribution's support.
    assert sign_flip_test(np.abs(x)).p_value <= sign_flip_test(signs * np.abs(x)).p_value


def test_eighteen_tasks_is_exact_and_fast_enough() -> None:
    x = np.random.default_rng(11).integers(-3, 4, 18) / 3
    got = sign_flip_test(x)
    assert got.exact and got.n_permutations == 2**18
    assert got.p_value * 2**18 == got.n_extreme


def test_monte_carlo_is_seeded_and_close_to_exact() -> None:
    x = np.random.default_rng(5).normal(0.3, 1.0, 16)
    exact = sign_flip_test(x)
    mc = sign_flip_test(x, max_exact_n=8, n_resamples=40_000, seed=1)
    assert not mc.exact and mc.n_permutations == 40_000
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.01)
    again = sign_flip_test(x, max_exact_n=8, n_resamples=40_000, seed=1)
    other = sign_flip_test(x, max_exact_n=8, n_resamples=40_000, seed=2)
    assert again == mc
    assert other.p_value != mc.p_value
    assert mc.p_value == (1 + mc.n_extreme) / (1 + 40_000)


def test_monte_carlo_requires_seed_and_validates() -> None:
    x = np.ones(EXACT_MAX_N + 1)
    with pytest.raises(StatsError, match=r"seed is required: 41 tasks exceed max_exact_n=40"):
        sign_flip_test(x)
    with pytest.raises(StatsError, match=r"max_exact_n must be <= 40; got 41"):
        sign_flip_test(x, max_exact_n=41)
    with pytest.raises(StatsError, match="n_resamples must be an integer >= 1; got 0"):
        sign_flip_test(x, n_resamples=0, seed=1)
    with pytest.raises(StatsError, match="seed must be a non-negative int"):
        sign_flip_test(x, seed=-1)
    with pytest.raises(StatsError, match="values needs at least 1 values; got 0"):
        sign_flip_test([])
    with pytest.raises(StatsError, match=r"values must be 1-dimensional; got shape \(2, 2\)"):
        sign_flip_test([[1, 2], [3, 4]])
