"""`--dry-run` without any provider key: the plan and the cost estimate per model are
printed first, then one preflight message naming the missing keys, exit status 2, and
nothing is written (`cli.plan.dry_run`, `runner.preflight.dry_run_plan`)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from confide.cli.main import main
from confide.registry import get_benchmark
from confide.runner import load_experiment
from confide.runner.expand import expand

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY",
        "CONFIDE_OPENAI_API_KEY")


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No key and no endpoint of any provider; the working directory is an empty
    folder, so a stray write would show."""
    for name in list(os.environ):
        if name in KEYS or (name.startswith("CONFIDE_") and name.endswith("_BASE_URL")):
            monkeypatch.delenv(name)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def _cli(args: list[str], capsys: pytest.CaptureFixture[str],
         monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["confide", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main()
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def _models(stdout: str) -> list[str]:
    return re.findall(r"^model (\S+): used by", stdout, flags=re.MULTILINE)


@pytest.mark.parametrize("name", ["calbench_paper.yaml", "sotopia_tom_paper.yaml",
                                  "incognita_paper.yaml"])
def test_paper_file_dry_run_prints_plan_and_cost_then_the_missing_keys(
    name: str, no_keys: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = EXPERIMENTS / name
    experiment = load_experiment(path, check=False)
    episodes = len(expand(get_benchmark(experiment.benchmark), experiment))
    code, out, err = _cli(["run", str(path), "--dry-run"], capsys, monkeypatch)
    assert code == 2
    assert out.startswith(f"benchmark {experiment.benchmark}: {episodes} episode(s) = ")
    assert "expected model calls: at most" in out
    models = _models(out)
    assert models
    spend = out[out.index("estimated spend"):]
    for model in models:  # a cost estimate for every model of the plan
        line = next(x for x in spend.splitlines() if x.startswith(f"  {model}, "))
        assert re.search(r"cost (\$\d|unpriced)", line), line
    assert err.count("found before any episode ran") == 1  # one message, after the plan
    assert "OPENAI_API_KEY" in err
    assert "benchmark " not in err and "estimated spend" not in err
    assert list(no_keys.iterdir()) == []  # nothing written (no runs/ folder either)


def test_eval_dry_run_without_a_key_prints_three_plans_then_one_message(
    no_keys: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, out, err = _cli(["eval", "openai/gpt-5-mini", "--dry-run"], capsys, monkeypatch)
    assert code == 2
    assert out.count("expected model calls") == 3
    assert out.count("  openai/gpt-5-mini, seats: calls ") == 3  # the cost per model
    assert re.search(r"openai/gpt-5-mini, seats: .* cost \$\d", out)
    assert err.count("found before any episode ran") == 1
    assert err.count("confide eval openai/gpt-5-mini") == 1
    assert "OPENAI_API_KEY" in err
    for benchmark in ("calbench", "incognita", "sotopia-tom"):
        assert f"- {benchmark}: model openai/gpt-5-mini" in err
    assert list(no_keys.iterdir()) == []  # not even eval/
