"""The one registry of benchmarks: each is one line of `_DECLARATIONS`, its id and its
`Declaration` (`confide.declaration`, in `envs/<id>/declaration.py`). Other packages add
benchmarks through `confide.benchmarks` entry points (confide.plugins) naming a
`Declaration` (or, for a plugin without one, its `BenchmarkSpec`); a builtin id always
wins over a plugin of the same name.

A declaration imports nothing of its environment, so listing benchmarks, building the CLI's
command table, the glossary and the report's figures import none (OR-Tools, SciPy and the
task suites would take over a second); the spec it names is imported on first use, and
tests/test_registry.py checks that every declaration matches its spec."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from confide import plugins
from confide.declaration import Declaration
from confide.errors import ConfideError

if TYPE_CHECKING:
    from confide.core.benchmark import BenchmarkSpec

_DECLARATIONS: dict[str, str] = {
    "calbench": "confide.envs.calbench.declaration:DECLARATION",
    "demo": "confide.envs.demo.declaration:DECLARATION",
    "incognita": "confide.envs.incognita.declaration:DECLARATION",
    "sotopia-tom": "confide.envs.sotopia_tom.declaration:DECLARATION",
}


def benchmark_ids() -> list[str]:
    """Ids of every registered benchmark, builtin or from a plugin."""
    return sorted(set(_DECLARATIONS) | set(plugins.plugins(plugins.BENCHMARKS)))


def _target(target: str) -> object:
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def declaration(benchmark_id: str) -> Declaration:
    """The declaration registered under `benchmark_id` (a plugin's spec without one is
    declared by its own fields)."""
    target = _DECLARATIONS.get(benchmark_id)
    if target is not None:
        found = _target(target)
        if not isinstance(found, Declaration):
            raise TypeError(f"{target} is not a Declaration")
        return found
    found = plugins.load(plugins.BENCHMARKS, benchmark_id)
    if found is None:
        raise ConfideError(
            f"unknown benchmark {benchmark_id!r}; available: {', '.join(benchmark_ids())}"
        )
    point = plugins.plugins(plugins.BENCHMARKS)[benchmark_id]
    from confide.core.benchmark import BenchmarkSpec  # a spec plugin has imported it anyway

    if isinstance(found, BenchmarkSpec):
        found = Declaration(found.id, point.value, found.description, found.suites,
                            found.participants, found.conditions)
    if not isinstance(found, Declaration):
        raise plugins.PluginError(
            f"{plugins.BENCHMARKS} plugin {plugins.describe(point)} is a "
            f"{type(found).__name__}, not a BenchmarkSpec or a Declaration"
        )
    if found.id != benchmark_id:
        raise plugins.PluginError(
            f"{plugins.BENCHMARKS} plugin {plugins.describe(point)} has id {found.id!r}; "
            "the entry point name must be the benchmark id"
        )
    return found


def get_benchmark(benchmark_id: str) -> BenchmarkSpec:
    """The spec registered under `benchmark_id` (its declaration's `spec`)."""
    from confide.core.benchmark import BenchmarkSpec

    target = declaration(benchmark_id).spec
    try:
        spec = _target(target)
    except Exception as exc:
        if benchmark_id in _DECLARATIONS:
            raise
        point = plugins.describe(plugins.plugins(plugins.BENCHMARKS)[benchmark_id])
        raise plugins.PluginError(
            f"{plugins.BENCHMARKS} plugin {point}: its spec {target} failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(spec, BenchmarkSpec) or spec.id != benchmark_id:
        raise plugins.PluginError(
            f"benchmark {benchmark_id!r}: {target} is not the BenchmarkSpec of that id"
        )
    return spec


def builtin_catalog() -> list[Declaration]:
    """The builtin benchmarks' declarations, by id, read without scanning the installed
    distributions' entry points (which costs `confide --help` a fifth of its time)."""
    return [declaration(name) for name in sorted(_DECLARATIONS)]


def catalog() -> tuple[list[Declaration], list[str]]:
    """What `confide benchmarks` lists: every benchmark's declaration, by id; and one
    message per plugin that could not be listed, so a broken plugin is named without
    hiding the others."""
    entries = builtin_catalog()
    problems: list[str] = []
    for name, point in sorted(plugins.plugins(plugins.BENCHMARKS).items()):
        if name in _DECLARATIONS:
            problems.append(
                f"{plugins.BENCHMARKS} plugin {plugins.describe(point)} is ignored: "
                f"{name!r} is a builtin benchmark"
            )
            continue
        try:
            entries.append(declaration(name))
        except ConfideError as exc:
            problems.append(str(exc))
    return sorted(entries, key=lambda entry: entry.id), problems


def known_declaration(benchmark_id: str) -> Declaration | None:
    """The declaration of `benchmark_id`, or None when no installed benchmark has that id
    or its plugin cannot be loaded (a report of a run whose benchmark is gone still
    renders, without the benchmark's glossary and figures)."""
    try:
        return declaration(benchmark_id)
    except ConfideError:
        return None
