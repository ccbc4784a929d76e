"""Holm and Benjamini-Hochberg adjusted p-values.

Incognita appendix B.1, Table 1 reports Holm-adjusted p-values over the six model-pair
interactions (family = the pairs tested together). Benjamini-Hochberg is offered for
reports that control the false discovery rate instead. Both return adjusted p-values in
the input order, capped at 1, so "reject at level q" is simply `adjusted <= q`.

Holm (1979): sort ascending, multiply the k-th smallest (k = 1..m) by m - k + 1, then
take the running maximum so that adjusted values never decrease with the raw ones.
Benjamini-Hochberg (1995): multiply the k-th smallest by m / k, then take the running
minimum from the largest down.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from confide.stats._validate import StatsError, as_vector


def _pvalues(pvalues: ArrayLike) -> NDArray[np.float64]:
    p = as_vector("pvalues", pvalues)
    bad = (p < 0.0) | (p > 1.0)
    if bad.any():
        i = int(np.argmax(bad))
        raise StatsError(f"pvalues must lie in [0, 1]; got {p[i]} at index {i}")
    return p


def holm(pvalues: ArrayLike) -> NDArray[np.float64]:
    """Holm step-down adjusted p-values, in input order (Incognita B.1, Table 1)."""
    p = _pvalues(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * (m - np.arange(m))
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted


def benjamini_hochberg(pvalues: ArrayLike) -> NDArray[np.float64]:
    """Benjamini-Hochberg (1995) step-up FDR-adjusted p-values, in input order.

    An alternative to the Holm family adjustment of Incognita B.1 for larger families.
    """
    p = _pvalues(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return adjusted
