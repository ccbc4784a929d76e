"""The exact sign-flip test at its limit: n == max_exact_n is still
enumerated exactly and equals brute force; one task more is Monte Carlo."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import comb

import numpy as np

from confide.stats import EXACT_MAX_N, sign_flip_test

BruteForce = Callable[[Sequence[Fraction], Fraction], int]


def test_n_equal_to_a_chosen_limit_is_exact_and_equals_brute_force(
    brute_force: BruteForce,
) -> None:
    numerators = [3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8]  # 12 tasks, multiples of 1/3
    values = [k / 3 for k in numerators]
    got = sign_flip_test(values, max_exact_n=len(values))
    assert got.exact and got.n_permutations == 2**12
    assert got.n_extreme == brute_force([Fraction(k, 3) for k in numerators], Fraction(0))
    assert got.p_value == got.n_extreme / 2**12
    beyond = sign_flip_test(values, max_exact_n=len(values) - 1, n_resamples=1000, seed=0)
    assert not beyond.exact and beyond.n_permutations == 1000


def test_default_limit_of_forty_tasks_is_exact() -> None:
    """40 tasks, 30 at +1 and 10 at -1: observed sum 20. Every |x| is 1, so a pattern's sum
    is 40 - 2k with k the tasks it sets to -1, and |40 - 2k| >= 20 iff k <= 10 or k >= 30:
    n_extreme = 2 * sum_{k<=10} C(40, k) = 2,442,492,264 of 2^40 patterns (binomial count;
    enumerating 2^40 patterns one by one is out of reach)."""
    assert EXACT_MAX_N == 40
    x = np.array([1.0] * 30 + [-1.0] * 10)
    got = sign_flip_test(x)
    expected = 2 * sum(comb(40, k) for k in range(11))
    assert expected == 2_442_492_264
    assert got.exact and got.n_permutations == 2**40
    assert got.n_extreme == expected
    assert got.p_value == expected / 2**40
    assert got.statistic == 0.5
