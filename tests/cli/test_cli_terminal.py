"""Terminal output: whole payloads, episode listing, participant names, pipes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from confide.core import Channel, EpisodeEnd, EpisodeStart, Postbox, TraceWriter
from confide.core.trace import read_trace
from confide.core.trace_view import participants, render_trace, resolve_participant
from confide.envs.calbench.events import InvalidToolCall, InvalidToolCallData
from confide.errors import ConfideError
from confide.registry import benchmark_ids, get_benchmark
from confide.runner import build_experiment, run_experiment
from confide.view.episodes import Where, read_episodes, select

SRC = str(Path(__file__).resolve().parents[2] / "src")
LONG = "private calendar note " + "x" * 600 + " END"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`confide ARGS` with stdout a pipe (not a terminal)."""
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "confide", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, check=False)


def _trace(tmp_path: Path) -> Path:
    writer = TraceWriter(tmp_path, "ep")
    writer.emit(EpisodeStart(episode_id="ep", benchmark="calbench", scenario_id="s", seed=1))
    box = Postbox(["Ann Lee", "bob"], on_deliver=writer.message)
    box.post("Ann Lee", Channel.dm(), to=["bob"], text="hi")
    writer.emit(InvalidToolCall(seat="bob", visible_to=["bob"], data=InvalidToolCallData(
        phase="CHEAP_TALK", tool_call={}, reason=LONG)))
    writer.finish(EpisodeEnd())
    return writer.final_path


def test_full_prints_payloads_whole_and_default_cuts(tmp_path: Path) -> None:
    trace = read_trace(_trace(tmp_path))
    assert LONG not in render_trace(trace) and "..." in render_trace(trace)
    assert LONG in render_trace(trace, full=True)


def test_as_matches_case_insensitively_and_unknown_names_fail_listing_valid(
    tmp_path: Path,
) -> None:
    trace = read_trace(_trace(tmp_path))
    assert participants(trace) == ["Ann Lee", "bob"]
    assert resolve_participant(trace, "ann lee") == "Ann Lee"
    assert "view of: Ann Lee" in render_trace(trace, "ANN LEE")
    with pytest.raises(ConfideError, match=r"'carol'.*valid names: 'Ann Lee', 'bob'"):
        render_trace(trace, "carol")
    result = _cli("trace", "show", str(tmp_path / "ep.jsonl.gz"), "--as", "carol")
    assert result.returncode == 2 and "'Ann Lee', 'bob'" in result.stderr


def test_where_parses_and_filters(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_experiment(build_experiment({"benchmark": "demo", "output_dir": str(run_dir)}),
                   show_progress=False)
    episodes = read_episodes(run_dir)
    assert len(episodes) == 3
    most = max(max(e.values("messages")) for e in episodes)
    chosen = select(episodes, [Where.parse(f"messages>={most}")], failed=False)
    assert chosen and all(max(e.values("messages")) >= most for e in chosen)
    assert select(episodes, [Where.parse(f"messages>{most}")], failed=False) == []
    assert select(episodes, [], failed=True) == []
    with pytest.raises(ConfideError, match="no numeric column 'nope'"):
        select(episodes, [Where.parse("nope<1")], failed=False)
    with pytest.raises(ConfideError, match="METRIC<X"):
        Where.parse("messages~3")
    listed = _cli("trace", "list", str(run_dir), "--where", f"messages>={most}")
    assert listed.returncode == 0
    assert {e.episode_id for e in chosen} <= set(re.findall(r"\| (\S+) +\|", listed.stdout))


def _words_whole(text: str, expected: list[str]) -> None:
    """Every expected phrase appears whole on one line, and nothing is cut with an ellipsis."""
    lines = text.splitlines()
    for phrase in expected:
        assert any(phrase in line for line in lines), phrase
    assert "…" not in text


def test_piped_benchmarks_and_help_are_never_cut() -> None:
    result = _cli("benchmarks")
    assert result.returncode == 0
    expected = []
    for bid in benchmark_ids():
        spec = get_benchmark(bid)
        expected += [spec.description, *spec.suites, *(c for c in spec.conditions if c)]
    _words_whole(result.stdout, expected)
    help_text = _cli("run", "--help").stdout
    assert "…" not in help_text and "│" not in help_text
    assert "'openai/gpt-5-mini,imap,imap'" in help_text


def test_piped_run_summary_is_whole_and_progress_goes_to_stderr(tmp_path: Path) -> None:
    out = tmp_path / ("a-rather-long-run-directory-name-" * 3)
    result = _cli("run", "demo", "--out", str(out))
    assert result.returncode == 0
    _words_whole(result.stdout, [f"results in {out}/results.csv", "demo summary"])
    assert "episodes" in result.stderr and "━" not in result.stdout
    table = [line for line in result.stdout.splitlines() if line.startswith("|")]
    assert len({len(line) for line in table}) == 1  # aligned: every row equally wide
