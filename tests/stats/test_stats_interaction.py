"""Model-pair difference-in-differences and the dispersion test (Incognita B.1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pytest

from confide.stats import (
    StatsError,
    aggregate_tasks,
    difference_in_differences,
    dispersion_contrast,
    dispersion_test,
    pairwise_interactions,
    sign_flip_test,
)

BruteForce = Callable[[Sequence[Fraction], Fraction], int]

BASE = np.array([[1, 1, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1]], dtype=float)
TREAT = np.array([[0, 0, 1, 0], [1, 1, 0, 1], [0, 1, 1, 1]], dtype=float)


def test_hand_computed_table() -> None:
    # Losses (base - treat): a = [1, 1, 0, 1], b = c = 0 -> Delta_ab = Delta_ac = [1, 1, 0, 1].
    np.testing.assert_array_equal(
        difference_in_differences(BASE, TREAT), [[1, 1, 0, 1], [1, 1, 0, 1], [0, 0, 0, 0]]
    )
    rows = pairwise_interactions(BASE, TREAT, ["a", "b", "c"])
    assert [(r.first, r.second) for r in rows] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert [r.interval.estimate for r in rows] == [0.75, 0.75, 0.0]
    # |sum| = 3 needs the three non-zero tasks to share a sign: 2 x 2 of 16 patterns.
    assert [r.test.p_value for r in rows] == [0.25, 0.25, 1.0]
    # Holm: 0.25 x 3 = 0.75, 0.25 x 2 = 0.5 -> running max 0.75; then 1.
    assert [r.p_holm for r in rows] == [0.75, 0.75, 1.0]
    assert all(r.test.exact for r in rows)


def test_dispersion_hand_computed() -> None:
    # Within-task SS: base [2/3, 0, 2/3, 0], treat [2/3, 2/3, 2/3, 2/3].
    np.testing.assert_allclose(dispersion_contrast(BASE, TREAT), [0, 2 / 3, 0, 2 / 3])
    got = dispersion_test(BASE, TREAT)
    assert got.statistic == pytest.approx(1 / 3)
    assert got.p_value == 0.5  # both non-zero tasks same sign: 2 x 4 of 16


def test_symmetries() -> None:
    rng = np.random.default_rng(2)
    base = rng.integers(0, 4, (4, 9)) / 3
    treat = rng.integers(0, 4, (4, 9)) / 3
    rows = pairwise_interactions(base, treat, list("abcd"))
    swapped = pairwise_interactions(treat, base, list("abcd"))
    for r, s in zip(rows, swapped, strict=True):
        assert s.interval.estimate == pytest.approx(-r.interval.estimate)
        assert s.test.p_value == r.test.p_value
    flipped = pairwise_interactions(base[::-1], treat[::-1], list("dcba"))
    assert {(r.first, r.second): r.test.p_value for r in rows} == {
        (r.second, r.first): r.test.p_value for r in flipped
    }
    assert dispersion_test(base, treat).p_value == dispersion_test(treat, base).p_value


def test_interaction_p_matches_brute_force(brute_force: BruteForce) -> None:
    rng = np.random.default_rng(9)
    base = rng.integers(0, 4, (3, 8))
    treat = rng.integers(0, 4, (3, 8))
    for row, (i, j) in zip(
        pairwise_interactions(base / 3, treat / 3, ["x", "y", "z"]),
        [(0, 1), (0, 2), (1, 2)],
        strict=True,
    ):
        delta = [
            Fraction(int(base[i, t] - treat[i, t] - base[j, t] + treat[j, t]), 3) for t in range(8)
        ]
        assert row.test.n_extreme == brute_force(delta, Fraction(0))


def test_from_rows_through_task_table() -> None:
    rows = []
    for m, model in enumerate(["a", "b", "c"]):
        for cond, data in (("indirect", BASE), ("social", TREAT)):
            for t in range(4):
                for rep in range(3):
                    rows.append(
                        {"model": model, "condition": cond, "task": f"t{t}", "rep": rep,
                         "success": bool(data[m, t])}
                    )  # fmt: skip
    table = aggregate_tasks(rows, value="success", repetition="rep")
    base = table.matrix("model", ["a", "b", "c"], condition="indirect")
    treat = table.matrix("model", ["a", "b", "c"], condition="social")
    assert [r.test.p_value for r in pairwise_interactions(base, treat, ["a", "b", "c"])] == [
        0.25, 0.25, 1.0,
    ]  # fmt: skip


def test_monte_carlo_path_is_seeded() -> None:
    rng = np.random.default_rng(4)
    base = rng.integers(0, 4, (3, 12)) / 3
    treat = rng.integers(0, 4, (3, 12)) / 3
    kwargs = {"max_exact_n": 6, "n_resamples": 2000}
    a = pairwise_interactions(base, treat, ["x", "y", "z"], seed=5, **kwargs)
    b = pairwise_interactions(base, treat, ["x", "y", "z"], seed=5, **kwargs)
    assert a == b and not a[0].test.exact
    exact = sign_flip_test(difference_in_differences(base, treat)[0])
    assert a[0].test.p_value == pytest.approx(exact.p_value, abs=0.05)


def test_errors() -> None:
    with pytest.raises(StatsError, match=r"got shapes \(3, 4\) and \(2, 4\)"):
        pairwise_interactions(BASE, TREAT[:2], ["a", "b", "c"])
    with pytest.raises(StatsError, match="models must list 3 labels"):
        pairwise_interactions(BASE, TREAT, ["a", "b"])
    with pytest.raises(StatsError, match="models must be distinct"):
        pairwise_interactions(BASE, TREAT, ["a", "a", "c"])
    with pytest.raises(StatsError, match="baseline needs at least 2 rows"):
        dispersion_test(BASE[:1], TREAT[:1])
