"""Shared fixtures for the stats tests: an independent brute-force sign-flip reference."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest

BruteForce = Callable[[Sequence[Fraction], Fraction], int]


def brute_force_extreme(values: Sequence[Fraction], tolerance: Fraction = Fraction(0)) -> int:
    """Count the sign patterns whose |sum| reaches the observed |sum| - tolerance, one by one."""
    observed = abs(sum(values, Fraction(0))) - tolerance
    count = 0
    for signs in itertools.product((1, -1), repeat=len(values)):
        total = sum((s * v for s, v in zip(signs, values, strict=True)), Fraction(0))
        if abs(total) >= observed:
            count += 1
    return count


@pytest.fixture(scope="session")
def brute_force() -> BruteForce:
    """The pure-Python enumeration, for tests that compare against it."""
    return brute_force_extreme
