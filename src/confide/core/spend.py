"""The spend columns' names, their means for a benchmark's summary table, and spend.csv
as a terminal and the report show it (`spend_rows`).

The runner adds `seat_<kind>`, `role_<role>_<kind>` and `episode_<kind>` to every result
row of a run that calls a model (`confide.runner.spend`); a benchmark's summary adds the
mean per seat row of its rows' `seat_<kind>` cells with `SeatSpend` (a row at a time,
so a summary that streams its rows keeps streaming). A run that calls no model has no
such cells, and its summary gets no such columns."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

KINDS = (
    "calls", "retries", "input_tokens", "cached_input_tokens", "cache_write_tokens",
    "output_tokens", "reasoning_tokens", "cost_usd", "invalid_replies",
)
"""The spend columns of one part, in order."""
SPEND_CSV = "spend.csv"
"""Per lineup and condition, what the episodes spent (`runner.spend.spend_table`)."""
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


SEAT_SPEND = frozenset(f"seat_{kind}" for kind in KINDS)
"""A summary's spend columns: summary.csv keeps them, while a terminal, the report's
headline and the viewer's run card show the paper's columns alone, and the spend apart
(one table of both is too wide to read)."""


def without_seat_spend(grid: list[list[str]]) -> list[list[str]]:
    """summary.csv's cells (a header row, then rows) without its `SEAT_SPEND` columns."""
    if not grid:
        return grid
    kept = [i for i, name in enumerate(grid[0]) if name not in SEAT_SPEND]
    return [[row[i] for i in kept if i < len(row)] for row in grid]


def seat_spend(rows: Any) -> dict[str, Any]:
    """`SeatSpend` columns of `rows` (any iterable of result rows)."""
    spend = SeatSpend()
    for row in rows:
        spend.add(row)
    return spend.columns()


SHOWN_KINDS = {
    "calls": "Calls",
    "input_tokens": "Tokens in",
    "cached_input_tokens": "cached",
    "output_tokens": "Tokens out",
    "reasoning_tokens": "reasoning",
    "cost_usd": "Cost ($)",
    "invalid_replies": "Invalid",
}
"""The kinds a terminal and the report show per lineup and condition, under their titles
(spend.csv also has retries and cache writes, and each seat's and role's own)."""


def spend_rows(run_dir: Path) -> list[dict[str, Any]]:
    """spend.csv for a terminal and the report: per lineup and condition, its episodes
    and what they spent (every seat and role together) under `SHOWN_KINDS`' titles;
    none for a run that called no model (it has no spend.csv)."""
    path = run_dir / SPEND_CSV
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    rows = []
    for row in table:
        shown: dict[str, Any] = {
            "Lineup": row["lineup"], "Condition": row["condition"] or "-",
            "Episodes": int(row["episodes"]),
        }
        for kind, title in SHOWN_KINDS.items():
            value = row.get(f"episode_{kind}") or "0"
            shown[title] = _dollars(value) if kind == "cost_usd" else int(value)
        rows.append(shown)
    return rows


def _dollars(cost: str) -> str:
    """A cost cell to the hundredth of a cent, or its words (`UNPRICED`, `PARTIAL`)."""
    try:
        return f"{float(cost):.4f}"
    except ValueError:
        return cost
