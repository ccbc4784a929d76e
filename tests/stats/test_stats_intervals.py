"""t intervals against scipy and Wilson intervals against hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from confide.stats import StatsError, paired_difference, t_interval, wilson_interval


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_paired_difference_matches_scipy(confidence: float) -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 18) / 3
    b = rng.integers(0, 4, 18) / 3
    got = paired_difference(a, b, confidence=confidence)
    ci = sps.ttest_rel(a, b).confidence_interval(confidence_level=confidence)
    assert got.lower == pytest.approx(ci.low, abs=1e-12)
    assert got.upper == pytest.approx(ci.high, abs=1e-12)
    d = a - b
    lo, hi = sps.t.interval(confidence, d.size - 1, loc=d.mean(), scale=sps.sem(d))
    assert (got.lower, got.upper) == pytest.approx((lo, hi), abs=1e-12)
    assert got.estimate == pytest.approx(d.mean())
    assert got.df == 17 and got.n == 18
    assert got.half_width == pytest.approx((got.upper - got.lower) / 2)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1, max_value=1, allow_nan=False, allow_subnormal=False),
        min_size=2,
        max_size=30,
    )
)
def test_t_interval_matches_scipy_ttest(values: list[float]) -> None:
    x = np.asarray(values)
    got = t_interval(x)
    assert got.lower <= got.estimate <= got.upper
    if x.std(ddof=1) > 1e-6:
        ci = sps.ttest_1samp(x, 0.0).confidence_interval()
        assert (got.lower, got.upper) == pytest.approx((ci.low, ci.high), abs=1e-9)
        assert got.excludes_zero == (sps.ttest_1samp(x, 0.0).pvalue < 0.05)


def test_constant_differences_collapse_the_interval() -> None:
    got = t_interval([0.5, 0.5, 0.5])
    assert (got.lower, got.estimate, got.upper, got.sd) == (0.5, 0.5, 0.5, 0.0)
    assert got.excludes_zero


def test_interval_argument_errors() -> None:
    with pytest.raises(StatsError, match="values needs at least 2 values; got 1"):
        t_interval([1.0])
    with pytest.raises(StatsError, match="confidence must be a number strictly between"):
        t_interval([1.0, 2.0], confidence=95)
    with pytest.raises(StatsError, match="paired per task; got lengths 3 and 2"):
        paired_difference([1, 2, 3], [1, 2])
    with pytest.raises(StatsError, match=r"a must be finite; got nan at index \(1,\)"):
        paired_difference([1, float("nan")], [1, 2])


def test_wilson_hand_computed() -> None:
    # 8 of 10 at 95%: z = 1.959964, z^2 = 3.841459; centre = (0.8 + 0.192073) / 1.384146
    # = 0.716740; half = z * sqrt(0.016 + 0.009604) / 1.384146 = 0.226578.
    got = wilson_interval(8, 10)
    assert got.estimate == 0.8
    assert got.lower == pytest.approx(0.490162, abs=1e-6)
    assert got.upper == pytest.approx(0.943318, abs=1e-6)


def test_wilson_edges_and_errors() -> None:
    zero = wilson_interval(0, 5)
    assert zero.lower == 0.0 and 0.0 < zero.upper < 1.0
    full = wilson_interval(5, 5)
    assert full.upper == 1.0 and full.lower == pytest.approx(1 - zero.upper)
    with pytest.raises(StatsError, match=r"successes must be an integer in \[0, trials=5\]; got 6"):
        wilson_interval(6, 5)
    with pytest.raises(StatsError, match="trials must be an integer >= 1; got 0"):
        wilson_interval(0, 0)


@given(st.integers(min_value=1, max_value=500), st.data())
def test_wilson_contains_rate_and_stays_in_unit_interval(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(min_value=0, max_value=n))
    got = wilson_interval(k, n)
    assert 0.0 <= got.lower <= k / n <= got.upper <= 1.0
    assert not math.isnan(got.lower)
