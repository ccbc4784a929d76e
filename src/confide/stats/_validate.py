"""Argument checks shared by the stats modules.

Every public function validates its inputs here so that a bad argument fails at the
call site with a message naming the argument and the offending value, never with a
NumPy broadcasting error from deep inside a computation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from confide.errors import ConfideError

SeedLike = int | np.random.Generator
"""An integer seed or an existing generator; there is no global RNG anywhere in stats."""


class StatsError(ConfideError, ValueError):
    """A statistics function received an argument it cannot use."""


def as_array(name: str, values: ArrayLike, *, ndim: int) -> NDArray[np.float64]:
    """Convert to a finite float array of exactly `ndim` dimensions."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatsError(f"{name} must be numeric; got {values!r}") from exc
    if arr.ndim != ndim:
        raise StatsError(f"{name} must be {ndim}-dimensional; got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise StatsError(f"{name} must be finite; got {arr[where]} at index {where}")
    return arr


def as_vector(name: str, values: ArrayLike, *, min_len: int = 1) -> NDArray[np.float64]:
    """Convert to a finite 1-D float array with at least `min_len` entries."""
    arr = as_array(name, values, ndim=1)
    if arr.size < min_len:
        raise StatsError(f"{name} needs at least {min_len} values; got {arr.size}")
    return arr


def as_matrix(
    name: str, values: ArrayLike, *, min_rows: int = 1, min_cols: int = 1
) -> NDArray[np.float64]:
    """Convert to a finite 2-D float array with at least the given rows and columns."""
    arr = as_array(name, values, ndim=2)
    if arr.shape[0] < min_rows or arr.shape[1] < min_cols:
        raise StatsError(
            f"{name} needs at least {min_rows} rows and {min_cols} columns; got shape {arr.shape}"
        )
    return arr


def check_open_unit(name: str, value: float) -> float:
    """A probability-like level strictly between 0 and 1 (confidence, alpha, power)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 < value < 1.0:
        raise StatsError(f"{name} must be a number strictly between 0 and 1; got {value!r}")
    return float(value)


def check_positive_int(name: str, value: int, *, minimum: int = 1) -> int:
    """An integer count of at least `minimum` (bools are rejected)."""
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < minimum:
        raise StatsError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def check_positive(name: str, value: float, *, allow_zero: bool = False) -> float:
    """A finite real number > 0 (or >= 0 with `allow_zero`)."""
    ok_type = isinstance(value, int | float | np.floating) and not isinstance(value, bool)
    if not ok_type or not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise StatsError(f"{name} must be a finite number {bound}; got {value!r}")
    return float(value)


def check_labels(name: str, labels: Sequence[str], *, count: int) -> tuple[str, ...]:
    """Distinct string labels, one per row of the data they describe."""
    out = tuple(labels)
    if isinstance(labels, str) or len(out) != count:
        raise StatsError(f"{name} must list {count} labels, one per row; got {labels!r}")
    if any(not isinstance(x, str) or not x for x in out) or len(set(out)) != len(out):
        raise StatsError(f"{name} must be distinct non-empty strings; got {labels!r}")
    return out


def generator(name: str, seed: SeedLike) -> np.random.Generator:
    """A NumPy generator from an int seed (fresh, reproducible) or a caller's generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool) and seed >= 0:
        return np.random.default_rng(int(seed))
    raise StatsError(f"{name} must be a non-negative int or numpy.random.Generator; got {seed!r}")
