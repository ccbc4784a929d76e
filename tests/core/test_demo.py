"""No made-up number without a label: a run seating a demo
participant says DEMO in summary.csv, the report, the viewer and the terminal."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from confide.cli.main import app
from confide.core.demo import DEMO, demo_participants, experiment_demo, mark_rows
from confide.registry import get_benchmark
from confide.runner.results import read_csv
from confide.view.data import RunData


def test_demo_participants_are_the_declared_ones() -> None:
    spec = get_benchmark("incognita")
    lineups = ["reference", "mock/incognita-skilled", "openai/gpt-5-mini", "mock/incognita-skilled"]
    assert demo_participants(spec, lineups) == ["mock/incognita-skilled"]
    assert demo_participants(spec, ["reference", "mock/json"]) == []
    assert demo_participants(get_benchmark("calbench"), ["imap,mock/incognita-skilled,imap"]) == []
    assert experiment_demo({"benchmark": "incognita", "lineups": ["mock/incognita-ineffective"]})
    assert experiment_demo({"benchmark": "nope", "lineups": ["mock/incognita-skilled"]}) == []
    assert mark_rows([{"a": 1}], True) == [{DEMO: DEMO, "a": 1}]
    assert mark_rows([{"a": 1}], False) == [{"a": 1}]


def test_a_mock_lineup_run_is_marked_everywhere(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "run", "incognita", "--lineup", "mock/incognita-skilled", "--condition", "direct",
        "--limit", "1", "--out", str(out), "--no-progress",
    ])
    assert result.exit_code == 0, result.output
    assert "DEMO: made-up numbers from mock/incognita-skilled" in result.output
    summary = read_csv(out / "summary.csv")
    assert summary and all(row[DEMO] == DEMO for row in summary)
    assert "DEMO: made-up numbers from mock/incognita-skilled" in (out / "report.html").read_text()
    assert RunData(out, 0).summary()["demo"].startswith("DEMO:")


def test_a_reference_run_is_not_marked(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "run", "incognita", "--lineup", "reference", "--condition", "direct",
        "--limit", "1", "--out", str(out), "--no-progress",
    ])
    assert result.exit_code == 0, result.output
    assert DEMO not in result.output
    assert DEMO not in read_csv(out / "summary.csv")[0]
    assert DEMO not in (out / "report.html").read_text()
    assert RunData(out, 0).summary()["demo"] == ""
