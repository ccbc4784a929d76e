"""Ctrl-C and SIGTERM stop a run cleanly: no new episodes, no partial
traces, every output written for the finished episodes, how to resume, exit 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from confide.core import read_trace
from confide.runner.results import read_csv

SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC}


def _interrupt(args: list[str], run_dir: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """Start `confide run ARGS`, send `signum` once three episodes are finished."""
    cmd = [sys.executable, "-m", "confide", "run", *args, "--out", str(run_dir), "--no-progress"]
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while len(list((run_dir / "traces").glob("*.jsonl.gz"))) < 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _check_stopped_cleanly(done: subprocess.CompletedProcess[str], run_dir: Path,
                           total: int) -> int:
    assert done.returncode == 130, (done.returncode, done.stderr)
    finals = sorted((run_dir / "traces").glob("*.jsonl.gz"))
    assert 3 <= len(finals) < total
    assert not list(run_dir.rglob("*.partial")), "in-flight episodes were left behind"
    assert not (run_dir / ".confide.lock").exists()
    for path in finals:
        footer = read_trace(path).footer
        assert footer is not None and footer.status == "ok", path  # a signal fails nothing
    rows = read_csv(run_dir / "results.csv")
    assert {r["episode_id"] for r in rows} == {p.name.removesuffix(".jsonl.gz") for p in finals}
    assert (run_dir / "summary.csv").stat().st_size > 0
    assert (run_dir / "report.html").stat().st_size > 0
    text = " ".join((done.stdout + done.stderr).split())
    assert f"{len(finals)} of {total} episodes finished" in text
    assert f"{len(finals)} of {total} episodes (" in text  # the count line says how many, too
    assert "To resume, run the same command again: confide run" in text
    return len(finals)


def test_sigint_stops_a_calbench_run_after_cp_sat_solves(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["calbench", "--suite", "tiny", "--lineup", "imap", "--condition", "dm",
            "--repetitions", "6"]
    finished = _check_stopped_cleanly(_interrupt(args, run_dir, signal.SIGINT), run_dir, 36)
    assert (run_dir / "belief_evidence.csv.gz").stat().st_size > 0  # the benchmark's tables too
    resumed = subprocess.run(
        [sys.executable, "-m", "confide", "run", *args, "--out", str(run_dir), "--no-progress"],
        env=ENV, capture_output=True, text=True, timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"36 episodes ({finished} resumed, 0 failed)" in " ".join(resumed.stdout.split())


def test_sigterm_stops_a_sotopia_tom_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    _check_stopped_cleanly(_interrupt(["sotopia-tom"], run_dir, signal.SIGTERM), run_dir, 48)


PROBE = textwrap.dedent("""
    import asyncio, json, os, signal, sys
    from confide.runner import build_experiment, run_experiment_async
    caught = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda s, f: caught.append(s))
    for benchmark, fields in json.loads(sys.argv[2]).items():
        exp = build_experiment({"benchmark": benchmark, "limit": 1, **fields,
                                "output_dir": os.path.join(sys.argv[1], benchmark)})
        asyncio.run(run_experiment_async(exp, show_progress=False))
        print(benchmark, flush=True)
        for signum in (signal.SIGINT, signal.SIGTERM):
            os.kill(os.getpid(), signum)  # dies here if a library reset the disposition
    print(len(caught))
""")


def test_no_episode_takes_the_signals_away_from_python(tmp_path: Path) -> None:
    """The whole class: after an episode of each benchmark, SIGINT and SIGTERM still reach
    Python's handlers (CP-SAT used to leave SIGINT at its default: an instant kill)."""
    benchmarks = {"calbench": {"suite": "tiny", "lineups": ["imap"], "conditions": ["dm"]},
                  "sotopia-tom": {}, "incognita": {"conditions": ["social"]}, "demo": {}}
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path), json.dumps(benchmarks)], env=ENV,
        capture_output=True, text=True, timeout=300,
    )
    assert probe.returncode == 0, (probe.returncode, probe.stdout, probe.stderr[-2000:])
    assert probe.stdout.split() == [*benchmarks, str(2 * len(benchmarks))]
