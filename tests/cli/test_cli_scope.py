"""Benchmark-only commands refuse another benchmark's run up front, naming it: `leaderboard` serves
CalBench, `judge agree` Sotopia-ToM."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.cli.scope import require_benchmark, run_benchmark
from confide.errors import ConfideError

SOTOPIA_HEADER = "episode_id,task_id,lineup,status,seat,participant,da,ia,eff,cpv,infomgmt\r\n"


def _run(root: Path, name: str, benchmark: str | None, header: str = SOTOPIA_HEADER) -> Path:
    run_dir = root / name
    run_dir.mkdir()
    if benchmark is not None:
        (run_dir / "experiment.yaml").write_text(f"benchmark: {benchmark}\nsuite: null\n")
    (run_dir / "results.csv").write_text(header)
    return run_dir


def test_leaderboard_names_the_benchmark_it_serves(tmp_path: Path) -> None:
    run = _run(tmp_path, "sot", "sotopia-tom")
    result = CliRunner().invoke(app, ["leaderboard", str(run)])
    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert f"`confide leaderboard` serves calbench runs only; {run} is a run of sotopia-tom" in (
        message
    )
    assert "missing column" not in message


def test_judge_agree_refuses_calbench_runs(tmp_path: Path) -> None:
    cal = _run(tmp_path, "cal", "calbench", "game_id,seat\r\n")
    sot = _run(tmp_path, "sot", "sotopia-tom")
    result = CliRunner().invoke(app, ["judge", "agree", str(cal), str(sot)])
    assert isinstance(result.exception, ConfideError)
    assert str(result.exception) == (
        f"`confide judge agree` serves sotopia-tom runs only; {cal} is a run of calbench"
    )


def test_every_wrong_run_is_named_and_unmarked_runs_pass(tmp_path: Path) -> None:
    a, b = _run(tmp_path, "a", "incognita"), _run(tmp_path, "b", "demo")
    bare = _run(tmp_path, "bare", None)  # a results.csv assembled by hand
    assert run_benchmark(bare) is None
    require_benchmark("leaderboard", "calbench", [bare])
    with pytest.raises(ConfideError, match=f"{a} is a run of incognita; {b} is a run of demo"):
        require_benchmark("leaderboard", "calbench", [a, bare, b])
