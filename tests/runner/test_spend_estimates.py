"""Estimates before spending: the dry run's per-model range holds a
real one-episode run of each benchmark against a local fake OpenAI-compatible server,
and the papers' experiment files get tokens and cost per model."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
from tests.runner.test_spend_outputs import MODEL, CachingServer, priced_experiment

from confide.runner import run_experiment
from confide.runner.estimate import estimate
from confide.runner.preflight import preflight
from confide.runner.resolve import resolve_experiment

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("benchmark", ["calbench", "sotopia-tom", "incognita"])
def test_a_one_episode_run_lands_inside_the_estimated_range(
    benchmark: str, tmp_path: Path
) -> None:
    server = CachingServer()
    try:
        experiment = priced_experiment(benchmark, tmp_path / "run", server.base_url,
                                       tmp_path / "prices.json")
        plan = preflight(experiment)  # estimated before the run, as the dry run does
        estimates = estimate(plan, resolve_experiment(plan.spec, experiment))
        summary = run_experiment(experiment, show_progress=False)
    finally:
        server.close()
    assert estimates, "the benchmark declares call estimates"
    low = {k: sum(getattr(e, k)[0] for e in estimates if e.model == MODEL)
           for k in ("calls", "input_tokens", "output_tokens")}
    high = {k: sum(getattr(e, k)[2] for e in estimates if e.model == MODEL)
            for k in ("calls", "input_tokens", "output_tokens")}
    with (tmp_path / "run" / "results.csv").open(newline="", encoding="utf-8") as handle:
        (row, *_) = list(csv.DictReader(handle))
    actual = {"calls": int(row["episode_calls"]),
              "input_tokens": int(row["episode_input_tokens"]),
              "output_tokens": int(row["episode_output_tokens"])}
    assert summary.finished == 1 and actual["calls"] > 0
    for kind, value in actual.items():
        assert low[kind] <= value <= high[kind], (kind, low[kind], value, high[kind])


@pytest.mark.parametrize("name", ["incognita_paper.yaml", "sotopia_tom_paper.yaml"])
def test_the_papers_dry_runs_print_tokens_and_cost_per_model(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "confide", "run", str(ROOT / "experiments" / name),
         "--dry-run"],
        capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-not-used",
             "PYTHONPATH": str(ROOT / "src")},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("estimated spend"))
    assert "estimates, not measurements" in lines[head]
    models = {line.removeprefix("model ").split(": used by")[0] for line in lines
              if line.startswith("model ")}
    assert models
    shown = lines[head + 1:]
    for model in models:
        mine = [line for line in shown if line.strip().startswith(f"{model},")]
        assert mine, model
        for line in mine:
            assert "input tokens" in line and "output tokens" in line and "cost " in line
