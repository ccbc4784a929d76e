"""Every sampling default is explicit: each benchmark declares the
settings its code applies (`BenchmarkSpec.sampling_defaults`), the resolved experiment
shows them, and declaring them changes no request: a run with the declaration and one
without it send every model call with the same settings."""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from confide.core.trace import read_trace, trace_files
from confide.registry import get_benchmark
from confide.runner import build_experiment, run_experiment

RUNS: dict[str, dict[str, Any]] = {
    "calbench": {"suite": "tiny", "lineups": ["mock/json"], "conditions": ["dm"],
                 "roles": {"judge": "mock/json"}},
    "sotopia-tom": {"lineups": ["mock/json:tom-coach"], "roles": {"judge": "mock/json"}},
    "incognita": {"lineups": ["mock/incognita"], "conditions": ["indirect"],
                  "roles": {"customer": "mock/incognita", "desk": "mock/incognita",
                            "judge": "mock/incognita"}},
    "demo": {"lineups": ["mock/echo"]},
}


def _calls(out: Path, benchmark: str) -> list[tuple[str | None, str, dict[str, Any]]]:
    run_experiment(build_experiment({"benchmark": benchmark, "limit": 1,
                                     "output_dir": str(out), **RUNS[benchmark]}),
                   show_progress=False)
    return [(c.seat, c.purpose, c.config) for path in trace_files(out / "traces")
            for c in read_trace(path).model_calls()]


@pytest.mark.parametrize("benchmark", sorted(RUNS))
def test_declared_defaults_are_what_the_environment_applies(
    benchmark: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = get_benchmark(benchmark)
    assert spec.sampling_defaults, "every benchmark with model calls declares its defaults"
    declared = _calls(tmp_path / "declared", benchmark)
    module = importlib.import_module(f"confide.envs.{benchmark.replace('-', '_')}.spec")
    monkeypatch.setattr(module, "SPEC", dataclasses.replace(spec, sampling_defaults={}))
    assert get_benchmark(benchmark).sampling_defaults == {}
    undeclared = _calls(tmp_path / "undeclared", benchmark)
    assert declared and declared == undeclared
    resolved = yaml.safe_load((tmp_path / "declared" / "experiment.yaml").read_text())
    defaults = {k: v.overrides() for k, v in spec.sampling_defaults.items()}
    written = {k: {f: v for f, v in resolved["sampling"][k].items() if v is not None}
               for k in defaults}
    assert written == defaults
    run = json.loads((tmp_path / "declared" / "run.json").read_text())
    assert run["experiment"]["sampling"] == resolved["sampling"]


def test_the_experiments_settings_win_field_by_field() -> None:
    from confide.runner.resolve import resolve_experiment

    spec = get_benchmark("incognita")
    given = build_experiment({"benchmark": "incognita", "sampling": {
        "seats": {"reasoning_effort": "high"}, "desk": {"temperature": 0.5}, "agent": {"seed": 3},
    }})
    resolved = {k: v.overrides() for k, v in resolve_experiment(spec, given).sampling.items()}
    assert resolved == {
        "seats": {"temperature": 1.0, "reasoning_effort": "high"},
        "customer": {"temperature": 0.0}, "user": {"temperature": 0.0},
        "desk": {"temperature": 0.5}, "gate": {"temperature": 0.0},
        "judge": {"temperature": 0.0}, "agent": {"seed": 3},
    }
