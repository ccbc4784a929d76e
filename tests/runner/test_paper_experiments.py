"""The papers' designs as experiment files: each file validates, its
plan has the paper's cells, and a `--limit`ed form with mock models runs offline to `ok`
and writes the paper's tables. The smoke forms replace every model by a mock (the plan
counts are taken from the real files)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from confide.core.benchmark import parse_lineup
from confide.registry import get_benchmark
from confide.runner import build_experiment, load_experiment, run_experiment
from confide.runner.expand import expand
from confide.runner.preflight import declared_problems

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def plans(name: str) -> list[Any]:
    experiment = load_experiment(EXPERIMENTS / name, check=False)
    return expand(get_benchmark(experiment.benchmark), experiment)


@pytest.mark.parametrize("name", ["calbench_paper.yaml", "sotopia_tom_paper.yaml",
                                  "sotopia_tom_paper_models.yaml", "incognita_paper.yaml"])
def test_each_file_validates(name: str) -> None:
    """Every declared field checks out; the only problem allowed is a provider not yet in
    this build (the `anthropic/` and `google/` providers arrive with their own change)."""
    experiment = load_experiment(EXPERIMENTS / name, check=False)
    problems = declared_problems(get_benchmark(experiment.benchmark), experiment)
    assert all(re.search(r"unknown provider '(anthropic|google)'", p) for p in problems)


def test_calbench_file_is_the_mixed_agent_cohort_of_section_4_1() -> None:
    """Table 1's N: 135 seats per cost setting for each shared model, 45 per entrant."""
    seats: Counter[tuple[str, str]] = Counter()
    for plan in plans("calbench_paper.yaml"):
        for seat in plan.lineup:
            seats[(plan.task.cost_setting, seat.raw)] += 1
    shared = ["anthropic/claude-sonnet-4-6", "google/gemini-3.1-pro", "google/gemini-3-flash",
              "openai/gpt-5.4-mini"]
    entrants = ["openai-api/llama-4-maverick", "openai-api/qwen3.6-plus",
                "openai-api/deepseek-v4-pro"]
    for setting in ("uniform", "varied"):
        assert {m: seats[(setting, m)] for m in shared} == dict.fromkeys(shared, 135)
        assert {m: seats[(setting, m)] for m in entrants} == dict.fromkeys(entrants, 45)
    data = yaml.safe_load((EXPERIMENTS / "calbench_paper.yaml").read_text())
    assert data["roles"] == {"judge": "google/gemini-3.1-pro"}  # Appendix I's judge
    # every entrant sits in seat 0 of its slice
    assert [parse_lineup(x)[0].raw for x in data["lineups"]] == entrants


def test_calbench_dry_run_prints_table_1s_seats_per_setting() -> None:
    """The dry run states Table 1's N as the paper counts it: seats per model and cost
    setting (the `task_group` CalBench declares), not games."""
    from confide.cli.plan import dry_run

    lines, _ = dry_run(load_experiment(EXPERIMENTS / "calbench_paper.yaml", check=False))
    seats = {line for line in lines if line.startswith("seats of ")}
    assert "seats of anthropic/claude-sonnet-4-6: uniform 135, varied 135" in seats
    assert "seats of openai-api/qwen3.6-plus: uniform 45, varied 45" in seats
    assert len(seats) == 7  # four shared models and three entrants


def test_sotopia_files_are_six_models_by_four_methods_and_the_ablation() -> None:
    """Table 2's 6 x 4 cells and Table 3's Self-Focused ablation, over two files: GPT-5's
    runs at high reasoning effort, the other models' at their default."""
    found = plans("sotopia_tom_paper.yaml") + plans("sotopia_tom_paper_models.yaml")
    cells = Counter(plan.lineup_text for plan in found)
    scenarios = len(get_benchmark("sotopia-tom").load_tasks("core", None))
    assert len(cells) == 6 * 4 + 1 and set(cells.values()) == {scenarios}
    strategies = Counter(text.rsplit(":", 1)[1] for text in cells)
    assert strategies == {"basic": 6, "cot-privacy": 6, "tom-coach": 6, "tom-belief": 6,
                          "self-focused": 1}
    assert "openai/gpt-4o:self-focused" in cells
    models = yaml.safe_load((EXPERIMENTS / "sotopia_tom_paper_models.yaml").read_text())
    assert "seats" not in models["sampling"]  # GPT-4o takes no reasoning effort


def test_incognita_file_has_the_four_arms_in_a_latin_square() -> None:
    """216 trials per arm (section 5: 18 tasks x 4 models x 3 repetitions), the native
    tau-bench anchor included: the paper's 864."""
    arms = Counter(plan.condition for plan in plans("incognita_paper.yaml"))
    assert arms == {"native": 216, "direct": 216, "indirect": 216, "social": 216}


MOCKED: dict[str, dict[str, Any]] = {
    "calbench_paper.yaml": {"lineups": ["mock/json"], "roles": {"judge": "mock/json"},
                            "suite": "tiny"},
    "sotopia_tom_paper.yaml": {"lineups": ["mock/json:tom-coach"], "roles": {"judge": "mock/json"}},
    "sotopia_tom_paper_models.yaml": {
        "lineups": ["mock/json:basic", "mock/json:self-focused"],
        "roles": {"judge": "mock/json"},
    },
    "incognita_paper.yaml": {
        "lineups": ["mock/incognita-skilled"],
        "roles": {"customer": "mock/incognita", "user": "mock/incognita",
                  "desk": "mock/incognita", "judge": "mock/incognita"},
    },
}
OUTPUTS = {
    "calbench_paper.yaml": "summary.csv",
    "sotopia_tom_paper.yaml": "table4_talk_rate.csv",
    "sotopia_tom_paper_models.yaml": "table4_talk_rate.csv",
    "incognita_paper.yaml": "figure2_success.csv",
}


@pytest.mark.parametrize("name", sorted(MOCKED))
def test_the_limited_smoke_form_runs_offline(name: str, tmp_path: Path) -> None:
    data = yaml.safe_load((EXPERIMENTS / name).read_text())
    data.pop("cache_dir", None)
    data.pop("model_options", None)
    data.update(MOCKED[name], limit=1, repetitions=1, output_dir=str(tmp_path / "run"))
    summary = run_experiment(build_experiment(data), show_progress=False)
    assert summary.failed == [] and summary.episodes > 0
    assert (tmp_path / "run" / OUTPUTS[name]).is_file()
