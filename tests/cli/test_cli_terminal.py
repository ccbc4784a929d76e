"""Terminal output: whole payloads, episode listing, participant names, pipes."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from confide.core import Channel, EpisodeEnd, EpisodeStart, Postbox, TraceWriter
from confide.core.spend import SPEND_CSV, spend_rows
from confide.core.trace import read_trace
from confide.core.trace_view import participants, render_trace, resolve_participant
from confide.envs.calbench.events import InvalidToolCall, InvalidToolCallData
from confide.errors import ConfideError
from confide.registry import benchmark_ids, get_benchmark
from confide.runner import build_experiment, run_experiment
from confide.view.data import RunData
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


def test_a_model_run_prints_the_papers_columns_then_its_spend_per_lineup(
    tmp_path: Path,
) -> None:
    """The summary of a run that called a model is printed without its nine seat spend
    columns (too wide to read beside the paper's), and a second table gives what each
    lineup and condition spent, the same numbers as spend.csv; the report's headline and
    spend section and the viewer's run card likewise; summary.csv keeps all."""
    out = tmp_path / "run"
    result = _cli("run", "sotopia-tom", "--limit", "1", "--lineup", "mock/json",
                  "--role", "judge=mock/json", "--option", "max_turns=4", "--out", str(out),
                  "--no-progress")
    assert result.returncode == 0, result.stderr
    summary, spend = result.stdout.split("spend per lineup and condition")
    assert "seat_" not in summary and "DA" in summary
    assert "None" not in summary  # mock/json gives no verdict: its means read '-'
    cells = summary.strip().splitlines()[4].strip("|").split("|")
    assert "-" in [cell.strip() for cell in cells]
    with (out / "summary.csv").open(newline="", encoding="utf-8") as handle:
        assert "seat_calls" in next(csv.reader(handle))
    with (out / "spend.csv").open(newline="", encoding="utf-8") as handle:
        (spent,) = csv.DictReader(handle)
    header, _, row = spend.strip().splitlines()[:3]
    cells = dict(zip(
        (c.strip() for c in header.strip("|").split("|")),
        (c.strip() for c in row.strip("|").split("|")), strict=True,
    ))
    assert cells == {
        "Lineup": "mock/json", "Condition": "-", "Episodes": "1",
        "Calls": spent["episode_calls"], "Tokens in": spent["episode_input_tokens"],
        "cached": spent["episode_cached_input_tokens"],
        "Tokens out": spent["episode_output_tokens"],
        "reasoning": spent["episode_reasoning_tokens"],
        "Cost ($)": f"{float(spent['episode_cost_usd']):.4f}",
        "Invalid": spent["episode_invalid_replies"],
    }
    assert int(cells["Calls"]) > 0
    report = (out / "report.html").read_text(encoding="utf-8")
    headline = report.split('<h2 id="headline">')[1].split('<h2 id="figures">')[0]
    assert "seat_" not in headline and ">DA<" in headline.replace("</abbr>", "<")
    section = report.split('<h2 id="t-spend-csv">')[1].split("<h2 ")[0]
    for title in ("Tokens in", "cached", "Tokens out", "reasoning", "Cost ($)", "Invalid"):
        assert f">{title}<" in section
    assert f">{spent['episode_calls']}<" in section and "too large" not in section
    viewed = RunData(out, 0).summary()["headline"]  # the viewer's run card, likewise
    assert "DA" in viewed["columns"] and not [c for c in viewed["columns"] if "seat_" in c]
    assert all(len(row) == len(viewed["columns"]) for row in viewed["rows"])


def test_spend_rows_read_spend_csv_and_keep_an_unknown_price_in_words(
    tmp_path: Path,
) -> None:
    """A cost over calls of unknown price stays `unpriced`, never $0; a run that called
    no model has no spend.csv and no spend table."""
    assert spend_rows(tmp_path) == []
    kinds = ["calls", "retries", "input_tokens", "cached_input_tokens", "cache_write_tokens",
             "output_tokens", "reasoning_tokens", "cost_usd", "invalid_replies"]
    (tmp_path / SPEND_CSV).write_text(
        "lineup,condition,episodes,failed," + ",".join(f"episode_{k}" for k in kinds) + "\n"
        "a/x,dm,3,1,12,1,900,300,0,80,20,0.0123456,2\n"
        "b/y,,1,0,5,0,100,0,0,10,0,unpriced,0\n",
        encoding="utf-8",
    )
    assert spend_rows(tmp_path) == [
        {"Lineup": "a/x", "Condition": "dm", "Episodes": 3, "Calls": 12, "Tokens in": 900,
         "cached": 300, "Tokens out": 80, "reasoning": 20, "Cost ($)": "0.0123",
         "Invalid": 2},
        {"Lineup": "b/y", "Condition": "-", "Episodes": 1, "Calls": 5, "Tokens in": 100,
         "cached": 0, "Tokens out": 10, "reasoning": 0, "Cost ($)": "unpriced",
         "Invalid": 0},
    ]
