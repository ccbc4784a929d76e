"""The one registry of benchmarks. Environment packages are imported lazily, on first use,
so importing confide costs nothing and a broken optional environment cannot break others.

`CATALOG` repeats what `confide benchmarks` lists of each spec (id, description, suites,
reference participants, conditions), so listing them imports no environment (OR-Tools,
SciPy and the task suites would take over a second); tests/test_registry.py checks that it
matches the specs."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from confide.errors import ConfideError

if TYPE_CHECKING:
    from confide.core.benchmark import BenchmarkSpec

_SPECS: dict[str, str] = {
    "calbench": "confide.envs.calbench:SPEC",
    "demo": "confide.envs.demo:SPEC",
    "incognita": "confide.envs.incognita:SPEC",
    "sotopia-tom": "confide.envs.sotopia_tom:SPEC",
}


@dataclass(frozen=True)
class CatalogEntry:
    """What `confide benchmarks` shows of one spec (the fields of the same names)."""

    id: str
    description: str
    suites: tuple[str, ...]
    references: tuple[str, ...]
    conditions: tuple[str | None, ...]


CATALOG = (
    CatalogEntry(
        "calbench",
        "N assistants with private calendars schedule a stream of meetings (success, excess "
        "cost vs a CP-SAT oracle, messages, fairness).",
        ("canonical", "tiny"),
        ("imap", "sdmap", "dsm-welfare", "dsm-private"),
        ("dm", "participant-groupchat", "all-agent-groupchat"),
    ),
    CatalogEntry(
        "demo", "Relay ring that exercises the runtime (no benchmark logic).",
        ("default",), ("scripted",), (None,),
    ),
    CatalogEntry(
        "incognita", "Retail service tasks under direct, one-intermediary and six-desk access.",
        ("incognita-retail-18",), ("reference",), ("direct", "indirect", "social"),
    ),
    CatalogEntry(
        "sotopia-tom",
        "Multi-party information sharing with public and private channels: DA, IA, EFF, CPV "
        "and InfoMgmt (Sotopia-ToM).",
        ("core",), ("reference", "leaky"), (None,),
    ),
)


def benchmark_ids() -> list[str]:
    """Ids of every registered benchmark."""
    return sorted(_SPECS)


def get_benchmark(benchmark_id: str) -> BenchmarkSpec:
    """The spec registered under `benchmark_id`."""
    try:
        target = _SPECS[benchmark_id]
    except KeyError:
        raise ConfideError(
            f"unknown benchmark {benchmark_id!r}; available: {', '.join(benchmark_ids())}"
        ) from None
    from confide.core.benchmark import BenchmarkSpec

    module_name, _, attr = target.partition(":")
    spec = getattr(importlib.import_module(module_name), attr)
    if not isinstance(spec, BenchmarkSpec):
        raise TypeError(f"{target} is not a BenchmarkSpec")
    return spec
