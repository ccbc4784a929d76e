"""run_experiment from a notebook: inside a running event loop, and
without freezing the caller's garbage collector (only the CLI opts in)."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from typer.testing import CliRunner

from confide.cli.main import app
from confide.runner import RunSummary, build_experiment, run_experiment


def test_runs_inside_a_running_event_loop(tmp_path: Path) -> None:
    experiment = build_experiment({"benchmark": "demo", "output_dir": str(tmp_path / "run")})

    async def cell() -> RunSummary:  # what a Jupyter cell is: code on a running loop
        asyncio.get_running_loop()
        return run_experiment(experiment, show_progress=False)

    summary = asyncio.run(cell())
    assert (summary.episodes, summary.finished, summary.failed) == (3, 3, [])
    assert (tmp_path / "run" / "results.csv").is_file()


def test_the_library_leaves_the_collector_alone(tmp_path: Path) -> None:
    gc.unfreeze()
    experiment = build_experiment({"benchmark": "demo", "output_dir": str(tmp_path / "run")})
    run_experiment(experiment, show_progress=False)
    assert gc.get_freeze_count() == 0


def test_the_cli_freezes_the_loaded_tasks(tmp_path: Path) -> None:
    gc.unfreeze()
    try:
        result = CliRunner().invoke(
            app, ["run", "demo", "--no-progress", "--out", str(tmp_path / "run")]
        )
        assert result.exit_code == 0, result.output
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
