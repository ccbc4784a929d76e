"""End-to-end runs of the demo benchmark: results, resume, cache, faults, SIGKILL."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from confide.core import canonical_events, read_trace
from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _traces(run_dir: Path) -> dict[str, list[object]]:
    return {
        p.name: canonical_events([t.header, *t.events])
        for p in sorted((run_dir / "traces").glob("*.jsonl.gz"))
        for t in [read_trace(p)]
    }


def test_scripted_run_writes_rows_report_and_resumes(tmp_path: Path) -> None:
    exp = build_experiment({"benchmark": "demo", "output_dir": str(tmp_path / "run")})
    first = run_experiment(exp, show_progress=False)
    assert (first.episodes, first.skipped, first.failed) == (3, 0, [])
    rows = read_csv(tmp_path / "run" / "results.csv")
    assert len(rows) == 3 + 4 + 2  # one row per seat of the three rings
    # every seat sends one message per round: ring-4x3 has 3 rounds
    assert {r["messages"] for r in rows if r["task_id"] == "ring-4x3"} == {"3"}
    assert (tmp_path / "run" / "report.html").read_text().count("<table>") >= 2
    again = run_experiment(exp, show_progress=False)
    assert again.skipped == 3 and again.rows == first.rows


def test_same_seed_same_traces_different_seed_differs(tmp_path: Path) -> None:
    def run(name: str, seed: int) -> dict[str, list[object]]:
        exp = build_experiment({"benchmark": "demo", "seed": seed,
                                "output_dir": str(tmp_path / name)})
        run_experiment(exp, show_progress=False)
        return _traces(tmp_path / name)

    assert run("a", 1) == run("b", 1)
    assert run("a", 1) != run("c", 2)


def test_cache_second_run_makes_zero_model_calls(tmp_path: Path) -> None:
    def run(name: str) -> tuple[dict[str, int], dict[str, list[object]]]:
        exp = build_experiment({
            "benchmark": "demo", "lineups": ["mock/echo"], "output_dir": str(tmp_path / name),
            "cache_dir": str(tmp_path / "cache"),
        })
        summary = run_experiment(exp, show_progress=False)
        return summary.usage["total"], _traces(tmp_path / name)

    usage1, traces1 = run("first")
    usage2, traces2 = run("second")
    assert usage1["calls"] == 2 * 3 + 3 * 4 + 4 * 2
    # some opening prompts repeat across rings, so a few hits can happen in the first run
    assert usage1["cached_calls"] < usage1["calls"]
    assert usage2["cached_calls"] == usage2["calls"] == usage1["calls"]
    assert traces1 == traces2


def test_transient_faults_still_complete_every_episode(tmp_path: Path) -> None:
    exp = build_experiment({
        "benchmark": "demo", "lineups": ["mock/echo"], "repetitions": 4,
        "output_dir": str(tmp_path / "run"),
        "model_options": {"faults": {"rate": 0.3, "seed": 5}, "retry": {"base_delay_s": 0.0,
                                                                          "max_delay_s": 0.0}},
    })
    summary = run_experiment(exp, show_progress=False)
    assert summary.failed == [] and summary.episodes == 12
    assert summary.usage["total"]["retries"] > 0
    assert all(r["status"] == "ok" for r in summary.rows)


def test_sigkill_mid_run_then_resume_runs_each_episode_once(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"id": f"t{i:02d}", "seats": ["a", "b"], "rounds": 2}) + "\n"
        for i in range(24)
    ))
    run_dir = tmp_path / "run"
    exp_file = tmp_path / "exp.yaml"
    exp_file.write_text(
        f"benchmark: demo\ntasks: {tasks}\nlineups: ['mock/echo']\nconcurrency: 2\n"
        f"output_dir: {run_dir}\nmodel_options: {{latency_s: 0.05}}\n"
    )
    cmd = [sys.executable, "-m", "confide.cli.main", "run", str(exp_file), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(list((run_dir / "traces").glob("*.jsonl.gz"))) < 6 or not list(
        (run_dir / "traces").glob("*.partial")
    ):  # kill with episodes in flight
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = {p.name: p.read_bytes() for p in (run_dir / "traces").glob("*.jsonl.gz")}
    assert 6 <= len(done_before) < 24
    assert list((run_dir / "traces").glob("*.partial")), "episodes were in flight"

    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(done_before)} resumed, 0 failed)" in resumed.stdout.replace("\n", " ")
    finals = sorted((run_dir / "traces").glob("*.jsonl.gz"))
    assert len(finals) == 24
    for name, content in done_before.items():  # finished episodes were not rerun
        assert (run_dir / "traces" / name).read_bytes() == content
    for path in finals:
        trace = read_trace(path)
        assert trace.footer is not None and trace.footer.status == "ok"
    rows = read_csv(run_dir / "results.csv")
    ids = sorted(p.name.removesuffix(".jsonl.gz") for p in finals)
    assert sorted({r["episode_id"] for r in rows}) == ids
    assert len(rows) == 24 * 2
