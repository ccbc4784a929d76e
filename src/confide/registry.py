"""The one registry of benchmarks. Environment packages are imported lazily, on first use,
so importing confide costs nothing and a broken optional environment cannot break others.
Other packages add benchmarks through `confide.benchmarks` entry points (confide.plugins);
a builtin id always wins over a plugin of the same name.

`CATALOG` repeats what `confide benchmarks` lists of each spec (id, description, suites,
reference participants, conditions), so listing them imports no environment (OR-Tools,
SciPy and the task suites would take over a second); tests/test_registry.py checks that it
matches the specs."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from confide import plugins
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
    participants: tuple[str, ...]
    conditions: tuple[str | None, ...]

    @classmethod
    def of(cls, spec: BenchmarkSpec) -> CatalogEntry:
        return cls(spec.id, spec.description, spec.suites, spec.participants, spec.conditions)


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
        ("incognita-retail-18",), ("reference",), ("direct", "indirect", "social", "native"),
    ),
    CatalogEntry(
        "sotopia-tom",
        "Multi-party information sharing with public and private channels: DA, IA, EFF, CPV "
        "and InfoMgmt (Sotopia-ToM).",
        ("core",), ("reference", "leaky"), (None,),
    ),
)


def benchmark_ids() -> list[str]:
    """Ids of every registered benchmark, builtin or from a plugin."""
    return sorted(set(_SPECS) | set(plugins.plugins(plugins.BENCHMARKS)))


def get_benchmark(benchmark_id: str) -> BenchmarkSpec:
    """The spec registered under `benchmark_id`."""
    from confide.core.benchmark import BenchmarkSpec

    target = _SPECS.get(benchmark_id)
    if target is None:
        spec = plugins.load(plugins.BENCHMARKS, benchmark_id)
        if spec is None:
            raise ConfideError(
                f"unknown benchmark {benchmark_id!r}; available: {', '.join(benchmark_ids())}"
            )
        point = plugins.describe(plugins.plugins(plugins.BENCHMARKS)[benchmark_id])
        if not isinstance(spec, BenchmarkSpec):
            raise plugins.PluginError(
                f"{plugins.BENCHMARKS} plugin {point} is a {type(spec).__name__}, "
                "not a BenchmarkSpec"
            )
        if spec.id != benchmark_id:
            raise plugins.PluginError(
                f"{plugins.BENCHMARKS} plugin {point} has id {spec.id!r}; the entry point "
                "name must be the benchmark id"
            )
        return spec
    module_name, _, attr = target.partition(":")
    spec = getattr(importlib.import_module(module_name), attr)
    if not isinstance(spec, BenchmarkSpec):
        raise TypeError(f"{target} is not a BenchmarkSpec")
    return spec


def catalog() -> tuple[list[CatalogEntry], list[str]]:
    """What `confide benchmarks` lists: the builtin CATALOG (no environment imported)
    and every plugin benchmark (its module imported), by id; and one message per plugin
    that could not be listed, so a broken plugin is named without hiding the others."""
    entries = list(CATALOG)
    problems: list[str] = []
    for name, point in sorted(plugins.plugins(plugins.BENCHMARKS).items()):
        if name in _SPECS:
            problems.append(
                f"{plugins.BENCHMARKS} plugin {plugins.describe(point)} is ignored: "
                f"{name!r} is a builtin benchmark"
            )
            continue
        try:
            entries.append(CatalogEntry.of(get_benchmark(name)))
        except ConfideError as exc:
            problems.append(str(exc))
    return sorted(entries, key=lambda entry: entry.id), problems
