"""The local backend's process pool (`runner.pool`): which runs use it, the same outputs
as one process, and a run SIGKILLed mid-way with 2 workers resumed with every episode
played exactly once."""

from __future__ import annotations

import difflib
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from confide.core import canonical_events, read_trace
from confide.core.trace.paths import PARTIAL_SUFFIX
from confide.runner import build_experiment, pool, run_experiment
from confide.runner.config import ConfigError
from confide.runner.pool import MIN_POOLED, pool_size, usable_cores
from confide.runner.results import read_csv

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _demo_tasks(path: Path, count: int, rounds: int) -> Path:
    path.write_text("".join(
        json.dumps({"id": f"t{i:03d}", "seats": ["a", "b", "c"], "rounds": rounds}) + "\n"
        for i in range(count)
    ))
    return path


def _placements(run_dir: Path) -> dict[str, dict[str, str]]:
    return {
        p.name: read_trace(p).header.config.get("placement", {})
        for p in sorted((run_dir / "traces").glob("*.jsonl.gz"))
    }


def test_pool_only_for_cpu_bound_runs_with_enough_episodes() -> None:
    cpu = build_experiment({"benchmark": "calbench", "lineups": ["imap"]})
    assert pool_size(cpu, MIN_POOLED) == usable_cores() == len(os.sched_getaffinity(0))
    assert pool_size(cpu.model_copy(update={"workers": 3}), MIN_POOLED) == 3
    assert pool_size(cpu.model_copy(update={"workers": 3}), MIN_POOLED - 1) == 1
    model_seat = build_experiment({"benchmark": "calbench", "lineups": ["imap,mock/echo,imap"],
                                   "workers": 2})
    assert pool_size(model_seat, 10 * MIN_POOLED) == 1
    model_role = build_experiment({"benchmark": "sotopia-tom", "lineups": ["leaky"],
                                   "roles": {"judge": "mock/json"}, "workers": 2})
    assert pool_size(model_role, 10 * MIN_POOLED) == 1
    with pytest.raises(ConfigError, match="workers 2 needs backend: local"):
        build_experiment({"benchmark": "demo", "backend": "ray", "workers": 2})
    with pytest.raises(ConfigError, match="workers"):
        build_experiment({"benchmark": "demo", "workers": 0})


def _outputs(run_dir: Path) -> dict[str, Any]:
    """What must not depend on the worker count: every table and the canonical traces."""
    traces = {
        p.name: canonical_events([t.header, *t.events, *([t.footer] if t.footer else [])])
        for p in sorted((run_dir / "traces").glob("*.jsonl.gz"))
        for t in [read_trace(p)]
    }
    for events in traces.values():
        events[0]["config"].pop("placement", None)
    run = str(run_dir).encode()
    tables = {
        p.name: (gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes())
        .replace(run, b"RUN")
        for p in sorted([*run_dir.glob("*.csv"), *run_dir.glob("*.csv.gz")])
    }
    return {"traces": traces, "tables": tables}


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "spawned"])
def test_two_workers_equal_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork: bool
) -> None:
    monkeypatch.setattr(pool, "forks", lambda: fork)  # both ways, whatever threads run
    tasks = _demo_tasks(tmp_path / "tasks.jsonl", MIN_POOLED, rounds=40)
    config = {"benchmark": "demo", "tasks": str(tasks)}
    one = run_experiment(build_experiment(
        {**config, "workers": 1, "output_dir": str(tmp_path / "one")}), show_progress=False)
    two = run_experiment(build_experiment(
        {**config, "workers": 2, "output_dir": str(tmp_path / "two")}), show_progress=False)
    assert one.finished == two.finished == MIN_POOLED and one.failed == two.failed == []
    assert all(p == {} for p in _placements(tmp_path / "one").values())
    pids = {p["pid"] for p in _placements(tmp_path / "two").values()}
    assert len(pids) == 2 and str(os.getpid()) not in pids  # two pool processes played
    assert _outputs(tmp_path / "one") == _outputs(tmp_path / "two")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigkilled_run_with_two_workers_resumes_each_episode_once(tmp_path: Path) -> None:
    count = 3 * MIN_POOLED
    run_dir = tmp_path / "run"
    exp_file = tmp_path / "exp.yaml"
    exp_file.write_text(
        f"benchmark: demo\ntasks: {_demo_tasks(tmp_path / 'tasks.jsonl', count, rounds=100)}\n"
        f"output_dir: {run_dir}\nworkers: 2\n"
    )
    cmd = [sys.executable, "-m", "confide.cli.main", "run", str(exp_file), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": SRC}
    driver = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    seen: dict[str, int] = {}
    while len(set(seen.values())) < 2:  # until both pool processes have finished episodes
        assert driver.poll() is None, driver.stderr.read() if driver.stderr else ""
        assert time.monotonic() < deadline
        for path in (run_dir / "traces").glob("*.jsonl.gz"):
            if path.name not in seen:
                seen[path.name] = int(read_trace(path).header.config["placement"]["pid"])
        time.sleep(0.01)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    workers = {int(p["pid"]) for p in _placements(run_dir).values()}
    assert len(workers) == 2
    while any(_alive(pid) for pid in workers):  # the pool dies with its run
        assert time.monotonic() < deadline
        time.sleep(0.01)
    done_before = {p.name: p.read_bytes() for p in (run_dir / "traces").glob("*.jsonl.gz")}
    assert len(seen) <= len(done_before) <= count - MIN_POOLED  # the rest: a pool's again

    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(done_before)} resumed, 0 failed)" in resumed.stdout.replace("\n", " ")
    finals = sorted((run_dir / "traces").glob("*.jsonl.gz"))
    assert len(finals) == count and not list((run_dir / "traces").glob(f"*{PARTIAL_SUFFIX}"))
    for name, content in done_before.items():  # finished episodes were not played again
        assert (run_dir / "traces" / name).read_bytes() == content
    after = _placements(run_dir)
    new_pids = {int(after[p.name]["pid"]) for p in finals if p.name not in done_before}
    assert len(new_pids) == 2 and not new_pids & workers  # the rest: the new run's pool
    rows = read_csv(run_dir / "results.csv")
    ids = [r["episode_id"] for r in rows]
    assert sorted(set(ids)) == [p.name.removesuffix(".jsonl.gz") for p in finals]
    assert len(ids) == count * 3  # one row per episode and seat: none twice


RUN_SETTING_LINES = (b"workers: ", b"backend: ")
"""report.html echoes experiment.yaml: these lines say how the run went, nothing else."""


def _run_files(run_dir: Path) -> dict[str, bytes]:
    """Every table (inflated), results.csv and report.html (without its run-setting
    lines) of a run directory."""
    found = {
        p.name: gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        for p in sorted([*run_dir.glob("*.csv"), *run_dir.glob("*.csv.gz")])
    }
    report = (run_dir / "report.html").read_bytes().splitlines(keepends=True)
    found["report.html"] = b"".join(
        line for line in report if not line.lstrip().startswith(RUN_SETTING_LINES)
    )
    return found


@pytest.mark.ray
def test_one_worker_two_workers_and_ray_write_the_same_bytes(
    ray_session: str, tmp_path: Path
) -> None:
    """The README main job, cut to 6 tasks (72 games, enough for a pool), three ways into
    the same directory path (tables name traces by path), each moved aside after."""
    out = tmp_path / "run"
    files: dict[str, dict[str, bytes]] = {}
    for way, settings in {"local-1": {"workers": 1}, "local-2": {"workers": 2},
                          "ray": {"backend": "ray"}}.items():  # on `ray_session`
        summary = run_experiment(build_experiment(
            {"benchmark": "calbench", "limit": 6, "output_dir": str(out), **settings}
        ), show_progress=False)
        assert summary.finished == 72 and summary.failed == []
        placed = {(p.get("backend"), p.get("pid")) for p in _placements(out).values()}
        if way == "local-1":
            assert placed == {(None, None)}  # in this process
        elif way == "local-2":
            assert len(placed) == 2 and {b for b, _ in placed} == {"local"}
        else:
            assert {b for b, _ in placed} == {"ray"}
        files[way] = _run_files(out)
        out.rename(tmp_path / way)
    assert len(files["local-1"]) >= 18 and b"<html" in files["local-1"]["report.html"]
    assert files["local-2"] == files["local-1"]
    differ = [line for line in difflib.unified_diff(
        files["local-1"]["report.html"].decode().splitlines(),
        files["ray"]["report.html"].decode().splitlines(), lineterm="", n=0)]
    assert files["ray"] == files["local-1"], differ[:12]


def test_sigint_stops_two_workers_cleanly_and_the_rerun_plays_the_rest(tmp_path: Path) -> None:
    """Ctrl-C reaches the run (the pool processes ignore it): no new episodes, no
    `.partial` left, every output written for the finished ones, exit 130; the rerun
    plays only the rest."""
    run_dir = tmp_path / "run"
    total = 72  # the tiny suite's 6 tasks, 12 times: enough for a pool
    cmd = [sys.executable, "-m", "confide", "run", "calbench", "--suite", "tiny", "--lineup",
           "imap", "--condition", "dm", "--repetitions", "12", "--workers", "2", "--out",
           str(run_dir), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while len(list((run_dir / "traces").glob("*.jsonl.gz"))) < 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, err)
    finals = {p.name: p.read_bytes() for p in (run_dir / "traces").glob("*.jsonl.gz")}
    assert 3 <= len(finals) < total
    assert {p["backend"] for p in _placements(run_dir).values()} == {"local"}  # the pool
    assert not list(run_dir.rglob(f"*{PARTIAL_SUFFIX}"))
    assert not (run_dir / ".confide.lock").exists()
    played = {name.removesuffix(".jsonl.gz") for name in finals}
    assert {r["episode_id"] for r in read_csv(run_dir / "results.csv")} == played
    assert (run_dir / "report.html").stat().st_size > 0
    assert f"{len(finals)} of {total} episodes finished" in " ".join((out + err).split())

    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{total} episodes ({len(finals)} resumed, 0 failed)" in " ".join(resumed.stdout.split())
    for name, content in finals.items():  # not played again
        assert (run_dir / "traces" / name).read_bytes() == content


def test_a_script_without_the_main_guard_is_told_so(tmp_path: Path) -> None:
    """A spawned pool process imports the caller's script: one that calls run_experiment
    at its top level gets a message naming the guard, not a bare dead worker. (The pool
    is spawned because another thread runs; a forked one imports nothing.)"""
    tasks = _demo_tasks(tmp_path / "tasks.jsonl", MIN_POOLED, rounds=2)
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "from confide.runner import build_experiment, run_experiment\n"
        f"run_experiment(build_experiment({{'benchmark': 'demo', 'tasks': {str(tasks)!r}, "
        f"'workers': 2, 'output_dir': {str(tmp_path / 'run')!r}}}), show_progress=False)\n"
    )
    done = subprocess.run([sys.executable, str(script)], env={**os.environ, "PYTHONPATH": SRC},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert 'if __name__ == "__main__":' in done.stderr
    assert "ConfideError: run_experiment was called while a worker process" in done.stderr
