"""Holm and Benjamini-Hochberg against textbook examples and invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from confide.stats import StatsError, benjamini_hochberg, holm

# Benjamini & Hochberg (1995), section 4: 15 p-values from a clinical study.
BH_1995 = [
    0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
    0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000,
]  # fmt: skip


def test_bh_1995_example_hand_computed() -> None:
    adjusted = benjamini_hochberg(BH_1995)
    # p_(k) * 15 / k, then running minimum from the top (hand computed).
    expected = [
        0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.0638571428571, 0.0638571428571,
        0.0645, 0.0765, 0.486, 0.5811818181818, 0.714875, 0.7532307692308,
        0.8132142857143, 1.0,
    ]  # fmt: skip
    np.testing.assert_allclose(adjusted, expected, rtol=1e-10)
    # The paper's conclusion: at q = 0.05 BH rejects the four smallest (Bonferroni: three).
    assert int((adjusted <= 0.05).sum()) == 4
    assert int((np.asarray(BH_1995) * 15 <= 0.05).sum()) == 3


def test_holm_hand_computed_and_input_order_kept() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> max-acc.
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])


def test_holm_reproduces_incognita_table_1() -> None:
    raw = [0.00586, 0.00061, 0.00264, 0.13525, 0.16895, 1.0]
    expected = [0.02344, 0.00366, 0.01320, 0.40575, 0.40575, 1.0]
    np.testing.assert_allclose(holm(raw), expected, atol=1e-5)


def test_errors_name_the_bad_value() -> None:
    with pytest.raises(StatsError, match=r"pvalues must lie in \[0, 1\]; got 1.5 at index 1"):
        holm([0.1, 1.5])
    with pytest.raises(StatsError, match="pvalues needs at least 1 values"):
        benjamini_hochberg([])


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40))
def test_adjustment_invariants(raw: list[float]) -> None:
    p = np.asarray(raw)
    order = np.argsort(p, kind="stable")
    for adjusted in (holm(p), benjamini_hochberg(p)):
        assert np.all(adjusted >= p - 1e-15)
        assert np.all(adjusted <= 1.0)
        assert np.all(np.diff(adjusted[order]) >= -1e-15)  # monotone in the raw p-values
    assert np.all(benjamini_hochberg(p) <= holm(p) + 1e-15)
    assert np.all(holm(p) <= np.minimum(p * p.size, 1.0) + 1e-15)  # never above Bonferroni
