"""`confide leaderboard RUN_DIR...` via a local typer app (the main CLI registers the same
function)."""

from __future__ import annotations

import csv
from pathlib import Path

import typer
from typer.testing import CliRunner

from confide.envs.calbench.cli import leaderboard

COLUMNS = [
    "game_id",
    "seat",
    "participant",
    "is_reference",
    "coordination",
    "excess_cost",
    "excess_vps",
    "messages",
]


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command(name="leaderboard")(leaderboard)

    @app.command(name="other")
    def other() -> None:
        """Second command so `leaderboard` is addressed by name, as in the main CLI."""

    return app


def _run_dir(root: Path, name: str, rows: list[list[object]]) -> Path:
    run_dir = root / name
    run_dir.mkdir()
    with (run_dir / "results.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return run_dir


def _runs(root: Path) -> list[Path]:
    first = _run_dir(
        root,
        "run-a",
        [
            ["g1", "s0", "openai/gpt-5-mini", "false", 1.0, 0, 2.5, 4],
            ["g1", "s1", "local/smollm2", "false", 0.5, 10, 7.0, 9],
            ["g1", "s2", "imap", "true", 1.0, 0, "", 3],
        ],
    )
    second = _run_dir(
        root,
        "run-b",
        [
            ["g1", "s0", "openai/gpt-5-mini", "false", 1.0, 1, 3.0, 2],
            ["g1", "s1", "local/smollm2", "false", 0.0, 100, 1.0, 2],
        ],
    )
    return [first, second]


def test_prints_writes_and_rerun_is_identical(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    out = tmp_path / "board"
    runner = CliRunner()
    args = ["leaderboard", *map(str, runs), "--out", str(out)]
    result = runner.invoke(_app(), args)
    assert result.exit_code == 0, result.output
    assert "openai/gpt-5-mini" in result.output and "imap" in result.output
    ratings = (out / "ratings.json").read_bytes()
    table = (out / "leaderboard.csv").read_text()
    assert table.splitlines()[1].split(",")[1] == "openai/gpt-5-mini"
    assert "imap" in (out / "references.csv").read_text()

    again = runner.invoke(_app(), ["leaderboard", *map(str, reversed(runs)), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert (out / "ratings.json").read_bytes() == ratings
    assert (out / "leaderboard.csv").read_text() == table

    fresh = tmp_path / "fresh"
    reordered = runner.invoke(
        _app(), ["leaderboard", *map(str, reversed(runs)), "--out", str(fresh)]
    )
    assert reordered.exit_code == 0, reordered.output
    assert (fresh / "ratings.json").read_bytes() == ratings


def test_incremental_run_is_added(tmp_path: Path) -> None:
    first, second = _runs(tmp_path)
    ratings = tmp_path / "state.json"
    runner = CliRunner()
    assert (
        runner.invoke(_app(), ["leaderboard", str(first), "--ratings", str(ratings)]).exit_code == 0
    )
    assert ratings.read_text().count('"run_id"') == 1
    assert (
        runner.invoke(_app(), ["leaderboard", str(second), "--ratings", str(ratings)]).exit_code
        == 0
    )
    assert ratings.read_text().count('"run_id"') == 2


def test_bad_input_exits_with_located_message(tmp_path: Path) -> None:
    bad = _run_dir(tmp_path, "bad", [["g1", "s0", "a/b", "maybe", 1.0, 0, "", 0]])
    result = CliRunner().invoke(_app(), ["leaderboard", str(bad)])
    assert result.exit_code == 1
    assert "results.csv:2" in result.output and "is_reference" in result.output
    missing = CliRunner().invoke(_app(), ["leaderboard", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "cannot read results file" in missing.output
