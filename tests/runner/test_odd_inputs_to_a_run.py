"""Odd inputs to a run: an empty task file is one clear error naming the file (not an
empty run), and a lone surrogate in a non-model exception's text (a user's participant
raising) is written as U+FFFD in the trace and results.csv instead of crashing the writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from confide.core.trace import read_trace, trace_files
from confide.errors import ConfideError
from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv

RAISING = '''
class Raising:
    name = "raising"

    async def act(self, observation):
        raise ValueError("bad \\ud800 text")


def make(seat, ctx):
    return Raising()
'''


@pytest.mark.parametrize("benchmark", ["demo", "calbench"])
@pytest.mark.parametrize("content", ["", "\n\n"])
def test_an_empty_task_file_is_an_error_naming_it(
    tmp_path: Path, benchmark: str, content: str
) -> None:
    tasks = tmp_path / "empty.jsonl"
    tasks.write_text(content)
    exp = build_experiment({"benchmark": benchmark, "tasks": str(tasks),
                            "output_dir": str(tmp_path / "run")})
    with pytest.raises(ConfideError, match=r"empty\.jsonl: no tasks in file"):
        run_experiment(exp, show_progress=False)
    assert not (tmp_path / "run" / "results.csv").exists()


def test_a_lone_surrogate_in_an_exception_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "raising_seat.py").write_text(RAISING)
    monkeypatch.syspath_prepend(str(tmp_path))
    exp = build_experiment({"benchmark": "demo", "lineups": ["py:raising_seat:make"],
                            "output_dir": str(tmp_path / "run")})
    summary = run_experiment(exp, show_progress=False)
    assert summary.finished == 3 and len(summary.failed) == 3
    errors = {r["error"] for r in read_csv(tmp_path / "run" / "results.csv")}
    assert errors == {"ValueError: bad \ufffd text"}
    footers = [read_trace(p).footer for p in trace_files(tmp_path / "run" / "traces")]
    assert [f.error for f in footers if f is not None] == ["ValueError: bad \ufffd text"] * 3
    assert (tmp_path / "run" / "report.html").is_file()
