"""The spend columns' names, and their means for a benchmark's summary table.

The runner adds `seat_<kind>`, `role_<role>_<kind>` and `episode_<kind>` to every result
row of a run that calls a model (`confide.runner.spend`); a benchmark's summary adds the
mean per seat row of its rows' `seat_<kind>` cells with `SeatSpend` (a row at a time,
so a summary that streams its rows keeps streaming). A run that calls no model has no
such cells, and its summary gets no such columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KINDS = (
    "calls", "retries", "input_tokens", "cached_input_tokens", "cache_write_tokens",
    "output_tokens", "reasoning_tokens", "cost_usd", "invalid_replies",
)
"""The spend columns of one part, in order."""
UNPRICED, PARTIAL = "unpriced", "partial"
"""What a cost cell over calls without a known price reads (`llm.pricing.cost_status`)."""


class SeatSpend:
    """The means per seat row of the `seat_` spend cells of the rows added."""

    def __init__(self) -> None:
        self._sums = dict.fromkeys(KINDS, 0.0)
        self._rows = 0
        self._unpriced = 0

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one result row (a row without spend cells adds nothing)."""
        if row.get("seat_calls") in (None, ""):
            return
        self._rows += 1
        for kind in KINDS:
            value = row.get(f"seat_{kind}")
            if value in (UNPRICED, PARTIAL):
                self._unpriced += 1
            elif value not in (None, ""):
                self._sums[kind] += float(value)

    def columns(self) -> dict[str, Any]:
        """`seat_<kind>` -> its mean (the cost `unpriced` or `partial` when some row's
        is); no columns when no row had spend cells."""
        if not self._rows:
            return {}
        means: dict[str, Any] = {f"seat_{k}": v / self._rows for k, v in self._sums.items()}
        if self._unpriced:
            means["seat_cost_usd"] = UNPRICED if self._unpriced == self._rows else PARTIAL
        return means


def seat_spend(rows: Any) -> dict[str, Any]:
    """`SeatSpend` columns of `rows` (any iterable of result rows)."""
    spend = SeatSpend()
    for row in rows:
        spend.add(row)
    return spend.columns()
