"""Resume reuses a finished episode only under the configuration that made it: anything else is
refused before a single episode runs, naming what differs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from confide.core import read_trace
from confide.core.trace import trace_text
from confide.errors import ConfideError
from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv


def _calbench(out: Path, seed: int, turns: int, **extra: Any) -> dict[str, Any]:
    return {"benchmark": "calbench", "suite": "tiny", "lineups": ["imap"], "conditions": ["dm"],
            "seed": seed, "options": {"max_turns_per_round": turns}, "output_dir": str(out),
            **extra}


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes()
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


def test_issue_example_refused_then_fresh_starts_over(tmp_path: Path) -> None:
    out = tmp_path / "X"
    run_experiment(build_experiment(_calbench(out, 1, 1)), show_progress=False)
    before = _snapshot(out)
    with pytest.raises(ConfideError) as refused:
        run_experiment(build_experiment(_calbench(out, 2, 20)), show_progress=False)
    message = str(refused.value)
    assert "6 finished episode(s)" in message
    assert "  seed: 1 vs. 2 (6 episodes)" in message
    assert "  options.max_turns_per_round: 1 vs. 20 (6 episodes)" in message
    assert "--fresh" in message and "--out" in message
    assert _snapshot(out) == before  # nothing ran, nothing was rewritten

    summary = run_experiment(build_experiment(_calbench(out, 2, 20)), show_progress=False,
                             fresh=True)
    assert (summary.skipped, summary.finished) == (0, 6)
    rows = read_csv(out / "results.csv")
    for path in (out / "traces").glob("*.jsonl.gz"):
        header = read_trace(path).header
        assert header.config["options"]["max_turns_per_round"] == 20
        assert header.fingerprint["seed"] == "2"
        assert {r["seed"] for r in rows if r["episode_id"] == header.episode_id} == {
            str(header.seed)}
    again = run_experiment(build_experiment(_calbench(out, 2, 20)), show_progress=False)
    assert again.skipped == 6 and again.rows == summary.rows


def _demo(out: Path, tasks: Path, **extra: Any) -> dict[str, Any]:
    return {"benchmark": "demo", "tasks": str(tasks), "lineups": ["scripted"],
            "output_dir": str(out), **extra}


def _tasks(path: Path, rounds: int) -> Path:
    path.write_text(json.dumps({"id": "ring", "seats": ["a", "b"], "rounds": rounds}) + "\n")
    return path


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"roles": {"judge": "mock/json"}},
         ["roles.judge: \"reference\" vs. \"mock/json\"", "confide rescore"]),
        ({"options": {"max_turns": 30}}, ["options.max_turns: 60 vs. 30"]),
        ({"model_options": {"mock": {"latency_s": 0.0}}},
         ["model_options.mock.latency_s: changed"]),
        ({"seed": 9}, ["seed: 0 vs. 9", "episode_seed: changed"]),
        ("task", ["task: changed (1 episodes, e.g. ring__scripted"]),
        ("scoring", ["scoring_version: 1 vs. 2"]),
    ],
    ids=["judge", "options", "model-options", "seed", "task-content", "scoring-version"],
)
def test_each_part_of_the_fingerprint_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any, expected: list[str]
) -> None:
    tasks = _tasks(tmp_path / "tasks.jsonl", 2)
    out = tmp_path / "run"
    fields = _demo(out, tasks)
    if isinstance(change, dict) and ("roles" in change or "options" in change):
        # a benchmark that declares a judge role and options (the resolved defaults,
        # judge=reference and max_turns=60, are what the first run recorded)
        fields = {"benchmark": "sotopia-tom", "limit": 1, "output_dir": str(out)}
    run_experiment(build_experiment(fields), show_progress=False)
    fields = dict(fields)
    if change == "task":
        _tasks(tasks, 3)  # same task id, different content
    elif change == "scoring":
        monkeypatch.setattr("confide.runner.fingerprint.SCORING_VERSION", 2)
    else:
        fields.update(change)
    with pytest.raises(ConfideError) as refused:
        run_experiment(build_experiment(fields), show_progress=False)
    for text in expected:
        assert text in str(refused.value)
    if "confide rescore" not in expected:  # only a changed score-only role advises it
        assert "rescore" not in str(refused.value)


def test_credentials_and_run_settings_do_not_block_resume(tmp_path: Path) -> None:
    """What cannot change an episode (an API key, concurrency, the cache) may change."""
    tasks = _tasks(tmp_path / "tasks.jsonl", 2)
    out = tmp_path / "run"
    first = _demo(out, tasks, model_options={"openai-api": {"api_key": "sk-one-1234567890"}})
    run_experiment(build_experiment(first), show_progress=False)
    second = _demo(out, tasks, model_options={"openai-api": {"api_key": "sk-two-0987654321"}},
                   concurrency=1, cache_dir=str(tmp_path / "cache"))
    assert run_experiment(build_experiment(second), show_progress=False).skipped == 1
    header = read_trace(next((out / "traces").glob("*.jsonl.gz"))).header
    assert "sk-one" not in json.dumps(header.fingerprint)


def test_traces_without_a_fingerprint_are_not_reused(tmp_path: Path) -> None:
    """Episodes written before fingerprints existed cannot be vouched for."""
    tasks = _tasks(tmp_path / "tasks.jsonl", 2)
    out = tmp_path / "run"
    exp = build_experiment(_demo(out, tasks))
    run_experiment(exp, show_progress=False)
    path = next((out / "traces").glob("*.jsonl.gz"))
    lines = trace_text(path).splitlines()
    header = json.loads(lines[0])
    del header["fingerprint"]
    path.write_bytes(gzip.compress(("\n".join([json.dumps(header), *lines[1:]]) + "\n").encode()))
    with pytest.raises(ConfideError, match=r"fingerprint: none \(written by confide "):
        run_experiment(exp, show_progress=False)
