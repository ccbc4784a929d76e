"""Paired-t power: known values, simulation, inversions (Incognita s.6.1, B.3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from confide.stats import StatsError, minimum_detectable_effect, paired_t_power, required_tasks


def test_textbook_value() -> None:
    # One-sample / paired t, d = 0.5, two-sided alpha 0.05, power 0.8: 34 subjects with
    # actual power 0.8078 (G*Power); the fractional solution is 33.37.
    assert paired_t_power(0.5, 1.0, 34) == pytest.approx(0.8078, abs=5e-4)
    assert required_tasks(0.5, 1.0) == pytest.approx(33.367, abs=2e-3)


def test_power_agrees_with_simulated_t_tests() -> None:
    rng = np.random.default_rng(12)
    n, effect, sd = 10, 0.25, 0.3
    samples = rng.normal(effect, sd, size=(20_000, n))
    rejected = sps.ttest_1samp(samples, 0.0, axis=1).pvalue < 0.05
    assert paired_t_power(effect, sd, n) == pytest.approx(rejected.mean(), abs=0.012)


def test_null_power_is_alpha_and_inversions_round_trip() -> None:
    assert paired_t_power(0.0, 1.0, 18) == pytest.approx(0.05, abs=1e-9)
    n = required_tasks(0.2, 0.33)
    assert paired_t_power(0.2, 0.33, n) == pytest.approx(0.8, abs=1e-8)
    mde = minimum_detectable_effect(0.33, 18)
    assert paired_t_power(mde, 0.33, 18) == pytest.approx(0.8, abs=1e-8)
    # The paper's "about 0.20" for 18 tasks at the observed gap dispersion (~0.3).
    assert 0.18 < minimum_detectable_effect(0.3, 18) < 0.23


def test_huge_effect_needs_the_minimum_two_tasks() -> None:
    assert required_tasks(10.0, 0.01) == 2.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: paired_t_power(0.1, 0.0, 10), r"sd must be a finite number > 0; got 0.0"),
        (lambda: paired_t_power(0.1, 1.0, 1.5), r"n_tasks must be >= 2; got 1.5"),
        (lambda: paired_t_power(float("inf"), 1.0, 5), r"effect must be a finite number"),
        (lambda: required_tasks(0.0, 1.0), r"effect must be non-zero"),
        (lambda: required_tasks(0.1, 1.0, power=0.01), r"power must exceed alpha=0.05"),
        (lambda: required_tasks(0.1, 1.0, alpha=1.0), r"alpha must be a number strictly"),
        (lambda: minimum_detectable_effect(1.0, 18, power=1), r"power must be a number"),
    ],
)
def test_errors(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(StatsError, match=message):
        call()


@settings(max_examples=40, deadline=None)
@given(
    st.floats(min_value=0.01, max_value=2.0),
    st.floats(min_value=0.05, max_value=1.0),
    st.integers(min_value=2, max_value=300),
)
def test_power_bounds_and_monotonicity(effect: float, sd: float, n: int) -> None:
    p = paired_t_power(effect, sd, n)
    assert 0.05 - 1e-9 <= p <= 1.0
    assert paired_t_power(effect, sd, n + 1) >= p - 1e-9
    assert paired_t_power(effect * 1.1, sd, n) >= p - 1e-9
    assert paired_t_power(-effect, sd, n) == pytest.approx(p)
