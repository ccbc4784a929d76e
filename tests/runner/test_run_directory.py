"""One run per directory, and nothing written through a planted symlink."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from confide.core import read_trace
from confide.errors import ConfideError
from confide.runner import build_experiment, run_experiment

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _slow_demo(tmp_path: Path) -> Path:
    """An experiment file whose run takes several seconds (mock replies with latency)."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"id": f"t{i:02d}", "seats": ["a", "b"], "rounds": 2}) + "\n"
        for i in range(40)
    ))
    exp = tmp_path / "exp.yaml"
    exp.write_text(
        f"benchmark: demo\ntasks: {tasks}\nlineups: ['mock/echo']\nconcurrency: 1\n"
        f"output_dir: {tmp_path / 'run'}\nmodel_options: {{latency_s: 0.05}}\n"
    )
    return exp


def test_second_run_exits_at_once_naming_the_holder_and_stale_lock_is_taken_over(
    tmp_path: Path,
) -> None:
    exp = _slow_demo(tmp_path)
    run_dir = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-m", "confide", "run", str(exp), "--no-progress"],
        env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not list((run_dir / "traces").glob("*.jsonl.gz")):
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        started = time.monotonic()
        second = build_experiment(_fields(exp))
        held = rf"in use by another confide run \(pid {holder.pid}\)"
        with pytest.raises(ConfideError, match=held):
            run_experiment(second, show_progress=False)
        assert time.monotonic() - started < 5
        assert holder.poll() is None  # the holder was not disturbed
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # the dead holder's lock file is still there; the next run takes it over
    assert (run_dir / ".confide.lock").read_text().strip() == str(holder.pid)
    summary = run_experiment(build_experiment(_fields(exp)), show_progress=False)
    assert summary.finished == 40 and not summary.failed
    assert not (run_dir / ".confide.lock").exists()


def _fields(exp: Path) -> dict[str, object]:
    data = yaml.safe_load(exp.read_text())
    assert isinstance(data, dict)
    return data


def test_planted_symlinks_are_replaced_never_written_through(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    exp = build_experiment({"benchmark": "demo", "output_dir": str(run_dir)})
    run_experiment(exp, show_progress=False)
    traces = sorted((run_dir / "traces").glob("*.jsonl.gz"))
    victims = tmp_path / "victims"
    victims.mkdir()

    def plant(link: Path) -> Path:
        victim = victims / link.name
        victim.write_text("precious\n")
        link.unlink(missing_ok=True)
        link.symlink_to(victim)
        return victim

    # episode 0 must rerun: its trace is gone and its .partial points at a victim;
    # episode 1's finished trace is a symlink to a valid copy of itself (not trusted)
    rerun = traces[0]
    rerun.unlink()
    planted = [plant(rerun.with_name(rerun.name + ".partial"))]
    copy = victims / "copy.jsonl"
    copy.write_bytes(traces[1].read_bytes())
    traces[1].unlink()
    traces[1].symlink_to(copy)
    planted += [plant(run_dir / name) for name in
                ("results.csv", "summary.csv", "report.html", "experiment.yaml")]

    summary = run_experiment(exp, show_progress=False)
    assert (summary.skipped, summary.finished) == (1, 3)
    for victim in planted:
        assert victim.read_text() == "precious\n", victim
    assert copy.read_bytes() != b"" and read_trace(copy).footer is not None
    for path in [*traces, *(run_dir / n for n in ("results.csv", "report.html"))]:
        assert not path.is_symlink() and path.is_file(), path
    assert not list((run_dir / "traces").glob("*.partial"))


def test_fresh_moves_the_old_run_aside_whole_following_no_link(tmp_path: Path) -> None:
    """--fresh deletes nothing; the old run, its links and a user's notes
    move to `<dir>.replaced-<time>`, and the new run starts in an empty directory."""
    run_dir = tmp_path / "run"
    exp = build_experiment({"benchmark": "demo", "output_dir": str(run_dir)})
    run_experiment(exp, show_progress=False)
    results = (run_dir / "results.csv").read_bytes()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.png").write_text("x")
    (run_dir / "figures").symlink_to(outside)
    (run_dir / "notes.txt").write_text("mine")
    summary = run_experiment(exp, show_progress=False, fresh=True)
    assert (summary.skipped, summary.finished) == (0, 3)
    (aside,) = tmp_path.glob("run.replaced-*")
    assert summary.replaced == aside
    assert (aside / "results.csv").read_bytes() == results
    assert (aside / "notes.txt").read_text() == "mine"
    assert (aside / "figures").is_symlink() and (outside / "keep.png").read_text() == "x"
    assert not (aside / ".confide.lock").exists()
    assert not (run_dir / "figures").exists() and not (run_dir / "notes.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["run", aside.name, "outside"])
