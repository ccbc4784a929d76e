"""The one registry of benchmarks. Environment packages are imported lazily, on first use,
so importing confide costs nothing and a broken optional environment cannot break others."""

from __future__ import annotations

import importlib

from confide.core.benchmark import BenchmarkSpec
from confide.errors import ConfideError

_SPECS: dict[str, str] = {
    "calbench": "confide.envs.calbench:SPEC",
    "demo": "confide.envs.demo:SPEC",
    "incognita": "confide.envs.incognita:SPEC",
    "sotopia-tom": "confide.envs.sotopia_tom:SPEC",
}


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
    module_name, _, attr = target.partition(":")
    spec = getattr(importlib.import_module(module_name), attr)
    if not isinstance(spec, BenchmarkSpec):
        raise TypeError(f"{target} is not a BenchmarkSpec")
    return spec
