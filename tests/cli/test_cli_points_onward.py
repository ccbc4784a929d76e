"""A CLI that points onward: a run ends with its report and the command
that opens the viewer; `confide run ID --help` and `confide benchmarks ID` describe the
benchmark's options with types, defaults and paper sections; `--version`; readable
`trace list` values; the leaderboard names its units."""

from __future__ import annotations

import csv
from pathlib import Path

from typer.testing import CliRunner

from confide import __version__
from confide.cli.main import app


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_version() -> None:
    assert _invoke("--version").strip() == f"confide {__version__}"


def test_run_help_and_benchmarks_id_describe_the_benchmark() -> None:
    for output in (_invoke("run", "calbench", "--help"), _invoke("benchmarks", "calbench")):
        option = next(line for line in output.splitlines()
                      if line.strip().startswith("max_turns_per_round"))
        assert "int | None" in option and "default 20" in option and "[paper §A.4]" in option
        assert "suites:        canonical (default), tiny" in output
        assert "dm, participant-groupchat, all-agent-groupchat" in output
        assert "imap, sdmap, dsm-welfare, dsm-private (reference)" in output
        assert "judge" in output
    sotopia = _invoke("benchmarks", "sotopia-tom")
    assert "max_turns" in sotopia and "default 60" in sotopia
    assert "Usage:" in _invoke("run", "--help")  # no id: the generic help alone
    result = CliRunner().invoke(app, ["benchmarks", "nope"])
    said = str(result.exception or "") + result.output
    assert result.exit_code != 0 and "unknown benchmark 'nope'" in said


def test_a_run_ends_with_its_report_and_the_viewer_command(tmp_path: Path) -> None:
    out = tmp_path / "run"
    output = _invoke("run", "demo", "--limit", "1", "--no-progress", "--out", str(out))
    lines = output.splitlines()
    assert f"report: {out / 'report.html'}" in lines
    assert f"browse the episodes: confide view {out}" in lines
    assert (out / "report.html").is_file()


def test_trace_list_names_the_seats_that_match(tiny_runs: dict[str, Path]) -> None:
    run = tiny_runs["calbench"]
    rows = list(csv.DictReader((run / "results.csv").open(encoding="utf-8")))
    best = max(float(r["messages"]) for r in rows)
    chosen = [r for r in rows if float(r["messages"]) >= best]
    output = CliRunner().invoke(
        app, ["trace", "list", str(run), "--where", f"messages>={best:g}"]).output
    for row in chosen:
        assert f"{row['seat']} {best:.0f}" in output


def test_leaderboard_names_its_units(tiny_runs: dict[str, Path]) -> None:
    output = _invoke("leaderboard", str(tiny_runs["calbench"]))
    assert "No model seats in these runs" in output
    assert "CalBench leaderboard: models" not in output
    assert "on the cost scale the agents saw" in output and "slot-equivalent units" in output


def test_leaderboard_excess_per_setting_equals_the_reports_table(
    tiny_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = tiny_runs["calbench"]
    _invoke("leaderboard", str(run), "--out", str(tmp_path))
    board = list(csv.DictReader((tmp_path / "references.csv").open(encoding="utf-8")))
    summary = list(csv.DictReader((run / "summary.csv").open(encoding="utf-8")))
    compared = 0
    for row in board:
        for setting in ("uniform", "varied"):
            cells = [s for s in summary
                     if s["Method"] == row["participant"] and s["Setting"].lower() == setting]
            if not cells:
                assert row[f"excess_{setting}_mean"] == ""
                continue
            seats = sum(int(s["Seats"]) for s in cells)
            expected = sum(float(s["Excess"]) * int(s["Seats"]) for s in cells) / seats
            assert abs(float(row[f"excess_{setting}_mean"]) - expected) < 1e-9
            compared += 1
    assert compared >= 2
