"""Made-up numbers carry a label.

A benchmark may ship demo participants: mocks whose results measure no model (Incognita's
`mock/incognita-*` agents, which fail at fixed made-up rates). It declares them in
`BenchmarkSpec.demo`; every output of a run whose lineup seats one of them -- a column of
summary.csv, the report's banner, the viewer's badge and a terminal line -- says DEMO, so
its tables (p-values included) are never read as a result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from confide.core.benchmark import parse_lineup
from confide.errors import ConfideError

if TYPE_CHECKING:
    from confide.core.benchmark import BenchmarkSpec

DEMO = "DEMO"
"""The mark, as a summary.csv column name and value."""


def demo_participants(spec: BenchmarkSpec, lineups: Iterable[str]) -> list[str]:
    """The distinct seat specs of `lineups` that `spec` declares demo participants (a
    model spec counts without its `:strategy`), in first-seen order."""
    declared = set(spec.demo)
    found: dict[str, None] = {}
    for text in lineups:
        for seat in parse_lineup(text):
            name = seat.model if seat.model is not None else seat.raw
            if name in declared:
                found[name] = None
    return list(found)


def demo_line(participants: Iterable[str]) -> str:
    """The one-line label printed and shown for a demo run."""
    return f"{DEMO}: made-up numbers from {', '.join(participants)}; they measure no model"


def mark_rows(rows: list[dict[str, object]], demo: bool) -> list[dict[str, object]]:
    """`rows` with a first `DEMO` column (its value DEMO) when `demo`, else unchanged."""
    return [{DEMO: DEMO, **row} for row in rows] if demo else rows


def experiment_demo(experiment: Mapping[str, Any]) -> list[str]:
    """`demo_participants` of a run directory's resolved experiment (experiment.yaml as a
    mapping); empty when its benchmark is not installed here."""
    from confide.registry import get_benchmark

    try:
        spec = get_benchmark(str(experiment.get("benchmark", "")))
    except ConfideError:
        return []
    lineups = experiment.get("lineups")
    return demo_participants(spec, [str(x) for x in lineups] if isinstance(lineups, list) else [])
