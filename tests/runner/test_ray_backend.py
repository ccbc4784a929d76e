"""The Ray backend on one local Ray shared by the session (`ray_session`): the
same results as the local backend, a worker SIGKILLed mid-episode, the cluster-wide
provider limit, a driver SIGKILLed mid-run and resumed. Both ways traces reach the run
directory are run: workers sharing it write them (`shared`, what a local Ray probes to),
and workers without it return the bytes (`returned`, forced by `ray_traces: returned`)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from confide.core import canonical_events, read_trace
from confide.runner import RunSummary, build_experiment, run_experiment
from confide.runner.results import read_csv

pytestmark = pytest.mark.ray
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _outputs(run_dir: Path) -> dict[str, Any]:
    """What must not depend on the backend: the tables and the canonical traces."""
    traces = {
        p.name: canonical_events([t.header, *t.events, *([t.footer] if t.footer else [])])
        for p in sorted((run_dir / "traces").glob("*.jsonl.gz"))
        for t in [read_trace(p)]
    }
    tables = {  # every table the run wrote, with the run's own path (some name traces) cut
        p.name: gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        for p in sorted([*run_dir.glob("*.csv"), *run_dir.glob("*.csv.gz")])
    }
    run = str(run_dir).encode()
    return {"traces": traces, "tables": {k: v.replace(run, b"RUN") for k, v in tables.items()}}


def _placements(run_dir: Path) -> list[dict[str, str]]:
    return [
        read_trace(p).header.config["placement"]
        for p in sorted((run_dir / "traces").glob("*.jsonl.gz"))
    ]


def _on_ray(config: dict[str, Any], mode: str) -> dict[str, Any]:
    """`config` on Ray, its workers writing their traces in place (where they can) or
    returning them."""
    return {**config, "backend": "ray", "ray_traces": "auto" if mode == "shared" else "returned"}


def _demo_tasks(path: Path, count: int, rounds: int = 2) -> Path:
    path.write_text("".join(
        json.dumps({"id": f"t{i:02d}", "seats": ["a", "b"], "rounds": rounds}) + "\n"
        for i in range(count)
    ))
    return path


CALBENCH = {"benchmark": "calbench", "suite": "tiny", "limit": 2, "lineups": ["imap", "sdmap"],
            "conditions": ["dm"]}


@pytest.mark.parametrize(
    ("config", "mode"),
    [
        (CALBENCH, "shared"),
        (CALBENCH, "returned"),
        ({"benchmark": "sotopia-tom", "limit": 2, "lineups": ["leaky"]}, "shared"),
    ],
    ids=["calbench-shared", "calbench-returned", "sotopia-tom-shared"],
)
def test_ray_run_equals_local_run(
    ray_session: str, tmp_path: Path, config: dict[str, Any], mode: str
) -> None:
    local = run_experiment(
        build_experiment({**config, "output_dir": str(tmp_path / "local")}), show_progress=False
    )
    on_ray = run_experiment(
        build_experiment(_on_ray({**config, "output_dir": str(tmp_path / "ray")}, mode)),
        show_progress=False,
    )
    assert on_ray.failed == [] and on_ray.episodes == local.episodes >= 2
    assert on_ray.rows == local.rows
    assert _outputs(tmp_path / "ray") == _outputs(tmp_path / "local")
    placements = _placements(tmp_path / "ray")
    assert {p["backend"] for p in placements} == {"ray"} and len(placements) == local.episodes
    assert {p["trace"] for p in placements} == {mode}
    # the probe's token is gone, and a returning worker's temporary directory held the rest
    assert sorted(p.name for p in (tmp_path / "ray" / "traces").iterdir()) == sorted(
        p.name for p in (tmp_path / "local" / "traces").iterdir()
    )


@pytest.mark.parametrize(
    ("mode", "per_call"), [("shared", 1), ("returned", 1), ("shared", 4), ("returned", 4)]
)
def test_worker_sigkilled_mid_episode_is_played_again_once(
    ray_session: str, tmp_path: Path, mode: str, per_call: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Episodes go one or `per_call` to a Ray call; either way the killed worker's unfinished
    episodes are played again once, and those it finished are kept, not played again, even
    when it died before replying (every fourth episode is slow, so a call's other episodes
    finish long before it returns)."""
    from confide.runner import ray_backend

    monkeypatch.setattr(ray_backend, "episodes_per_call", lambda experiment: per_call)
    run_dir = tmp_path / "run"
    count = 16 if per_call == 1 else 48  # more than the 8 / 16 handed out at once
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"id": f"t{i:02d}", "seats": ["a", "b"], "rounds": 12 if i % 4 == 3 else 2})
        + "\n" for i in range(count)
    ))
    experiment = build_experiment(_on_ray({
        "benchmark": "demo", "tasks": str(tasks),
        "lineups": ["mock/echo"], "model_options": {"latency_s": 0.1}, "concurrency": 4,
        "output_dir": str(run_dir),
    }, mode))
    result: list[RunSummary] = []
    runner = threading.Thread(target=lambda: result.append(run_experiment(experiment,
                                                                         show_progress=False)))
    runner.start()
    deadline = time.monotonic() + 120
    while not list((run_dir / "traces").glob("*.jsonl.gz")):
        assert runner.is_alive() and time.monotonic() < deadline
        time.sleep(0.05)
    # the worker that finished the first episode still has episodes to play: kill it
    victim = _placements(run_dir)[0]
    os.kill(int(victim["pid"]), signal.SIGKILL)
    kept = {p: p.read_bytes() for p in (run_dir / "traces").glob("*.jsonl.gz")}
    runner.join(timeout=180)
    assert not runner.is_alive()
    summary = result[0]
    assert summary.failed == [] and summary.finished == count
    ids = sorted(p.name.removesuffix(".jsonl.gz") for p in (run_dir / "traces").glob("*.gz"))
    assert len(ids) == count and not list((run_dir / "traces").glob("*.partial"))
    rows = read_csv(run_dir / "results.csv")
    assert sorted({r["episode_id"] for r in rows}) == ids and len(rows) == count * 2
    workers = {p["worker"] for p in _placements(run_dir)}
    assert "w2" in workers, "a fresh worker replaced the killed one"
    assert victim in _placements(run_dir)
    assert {p: p.read_bytes() for p in kept} == kept  # finished episodes were not played again
    assert {p["trace"] for p in _placements(run_dir)} == {mode}


def test_episode_whose_worker_always_dies_fails_with_a_trace(
    ray_session: str, tmp_path: Path
) -> None:
    from ray_probe import setup

    from confide.llm import unregister_mock
    from confide.runner.ray_backend import ATTEMPTS

    setup()  # the driver's preflight builds mock/fatal (only the workers ever call it)
    run_dir = tmp_path / "run"
    try:
        summary = run_experiment(build_experiment({
            "benchmark": "demo", "tasks": str(_demo_tasks(tmp_path / "tasks.jsonl", 1)),
            "lineups": ["mock/fatal"], "output_dir": str(run_dir), "backend": "ray",
        }), show_progress=False)
    finally:
        unregister_mock("fatal")
        unregister_mock("gauge")
    (path,) = (run_dir / "traces").glob("*.jsonl.gz")
    assert summary.failed == [path.name.removesuffix(".jsonl.gz")] and summary.finished == 1
    assert not list((run_dir / "traces").glob("*.partial"))
    trace = read_trace(path)
    assert trace.header.scenario_id == "t00" and trace.header.lineup == ["mock/fatal"]
    assert trace.header.config["placement"]["worker"] == "driver"
    assert trace.footer is not None and trace.footer.status == "error"
    assert f"died on all {ATTEMPTS} attempts" in (trace.footer.error or "")
    (row,) = {r["episode_id"]: r for r in read_csv(run_dir / "results.csv")}.values()
    assert row["status"] == "error" and row["episode_id"] == path.name.removesuffix(".jsonl.gz")


def test_provider_limit_holds_across_workers(
    ray_session: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ray_probe import setup, start_gauge

    from confide.llm import unregister_mock
    from confide.llm.registry import default_limits
    from confide.runner import ray_backend

    monkeypatch.setattr(ray_backend, "PROVIDER_LIMITS", {**default_limits(), "mock": 2})
    setup()  # the driver's preflight builds mock/gauge too (the workers register their own)
    gauge = start_gauge()
    try:
        summary = run_experiment(build_experiment({
            "benchmark": "demo", "tasks": str(_demo_tasks(tmp_path / "tasks.jsonl", 8)),
            "lineups": ["mock/gauge"], "concurrency": 8, "output_dir": str(tmp_path / "run"),
            "backend": "ray",
        }), show_progress=False)
        import ray

        now, peak = ray.get(gauge.read.remote())
    finally:
        import ray

        ray.kill(gauge)
        unregister_mock("gauge")
    assert summary.failed == [] and summary.usage["total"]["calls"] == 8 * 2 * 2
    assert len({p["worker"] for p in _placements(tmp_path / "run")}) == 2  # both workers
    assert (now, peak) == (0, 2)  # 8 episodes wanted 8 calls at once; 2 were let through


def test_driver_sigkilled_then_rerun_resumes(ray_session: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    exp_file = tmp_path / "exp.yaml"
    exp_file.write_text(
        f"benchmark: demo\ntasks: {_demo_tasks(tmp_path / 'tasks.jsonl', 20)}\n"
        f"lineups: ['mock/echo']\nconcurrency: 2\noutput_dir: {run_dir}\n"
        "model_options: {latency_s: 0.05}\n"
    )
    cmd = [sys.executable, "-m", "confide.cli.main", "run", str(exp_file), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": SRC}
    driver = subprocess.Popen(
        [*cmd, "--backend", "ray", "--ray-address", ray_session],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while len(list((run_dir / "traces").glob("*.jsonl.gz"))) < 4:
        assert driver.poll() is None, driver.stderr.read() if driver.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.02)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    # Ray ends a dead driver's workers within moments; until then one writing into the
    # shared run directory could still finish an episode
    workers = {int(p["pid"]) for p in _placements(run_dir)}
    while any(_alive(pid) for pid in workers):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    done_before = {p.name: p.read_bytes() for p in (run_dir / "traces").glob("*.jsonl.gz")}
    assert 4 <= len(done_before) < 20

    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(done_before)} resumed, 0 failed)" in resumed.stdout.replace("\n", " ")
    finals = sorted((run_dir / "traces").glob("*.jsonl.gz"))
    assert len(finals) == 20 and not list((run_dir / "traces").glob("*.partial"))
    for name, content in done_before.items():  # finished episodes were not rerun
        assert (run_dir / "traces" / name).read_bytes() == content
    rows = read_csv(run_dir / "results.csv")
    assert sorted({r["episode_id"] for r in rows}) == [p.name.removesuffix(".jsonl.gz")
                                                       for p in finals]
    assert len(rows) == 20 * 2


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("mode", ["shared", "returned"])
def test_stopped_run_leaves_no_partial_trace_and_resumes(
    ray_session: str, tmp_path: Path, mode: str
) -> None:
    """A stop (SIGINT) cancels the episodes in flight on the workers: a worker writing
    into the run directory discards its `.partial`s, and the rerun plays the rest."""
    import asyncio

    from confide.runner import run_experiment_async

    run_dir = tmp_path / "run"
    config = _on_ray({
        "benchmark": "demo", "tasks": str(_demo_tasks(tmp_path / "tasks.jsonl", 12, rounds=4)),
        "lineups": ["mock/echo"], "model_options": {"latency_s": 0.1}, "concurrency": 4,
        "output_dir": str(run_dir),
    }, mode)

    async def stopped_midway() -> RunSummary:
        stop = asyncio.Event()
        run = asyncio.ensure_future(run_experiment_async(
            build_experiment(config), show_progress=False, stop=stop
        ))
        deadline = time.monotonic() + 120
        while not list((run_dir / "traces").glob("*.jsonl.gz")):
            assert not run.done() and time.monotonic() < deadline
            await asyncio.sleep(0.02)
        stop.set()
        return await run

    summary = asyncio.run(stopped_midway())
    done = sorted((run_dir / "traces").glob("*.jsonl.gz"))
    assert summary.interrupted and 1 <= summary.finished == len(done) < 12
    assert [p.name for p in (run_dir / "traces").iterdir() if p not in done] == []
    resumed = run_experiment(build_experiment(config), show_progress=False)
    assert resumed.skipped == len(done) and resumed.finished == 12 and resumed.failed == []
    assert len(read_csv(run_dir / "results.csv")) == 12 * 2


def test_connected_workers_start_before_preflight_and_end_when_it_refuses(
    ray_session: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process connected to Ray starts a run's workers before preflight (they import
    confide meanwhile); when preflight refuses the experiment, they are ended and nothing
    is written."""
    from confide.runner import PreflightError, execute, ray_backend

    events: list[str] = []
    start, close, check = ray_backend.RayEpisodes.__init__, ray_backend.RayEpisodes.close, (
        execute.preflight)

    def starting(self: Any, *args: Any) -> None:
        events.append("workers start")
        start(self, *args)

    def closing(self: Any) -> None:
        events.append("workers end")
        close(self)

    def checking(experiment: Any) -> Any:
        events.append("preflight")
        return check(experiment)

    monkeypatch.setattr(ray_backend.RayEpisodes, "__init__", starting)
    monkeypatch.setattr(ray_backend.RayEpisodes, "close", closing)
    monkeypatch.setattr(execute, "preflight", checking)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run_dir = tmp_path / "run"
    refused = build_experiment({**CALBENCH, "lineups": ["openai/gpt-5-mini"], "backend": "ray",
                                "output_dir": str(run_dir)})
    with pytest.raises(PreflightError, match="OPENAI_API_KEY"):
        run_experiment(refused, show_progress=False)
    assert events == ["workers start", "preflight", "workers end"]
    assert not run_dir.exists()


def test_unconnected_process_refused_by_preflight_never_starts_ray(tmp_path: Path) -> None:
    """Without a Ray connection the workers start only after preflight passed: a refused
    experiment never starts (or joins) a cluster."""
    script = (
        "import sys\n"
        "from confide.runner import PreflightError, build_experiment, run_experiment\n"
        f"e = build_experiment({{**{CALBENCH!r}, 'lineups': ['openai/gpt-5-mini'], "
        f"'backend': 'ray', 'output_dir': {str(tmp_path / 'run')!r}}})\n"
        "try:\n"
        "    run_experiment(e, show_progress=False)\n"
        "except PreflightError:\n"
        "    ray = sys.modules.get('ray')\n"
        "    print('ray started' if ray is not None and ray.is_initialized() else 'no ray')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.stdout.strip() == "no ray", done.stderr
    assert not (tmp_path / "run").exists()


def test_connected_process_still_checks_the_address_it_is_given(
    ray_session: str, tmp_path: Path
) -> None:
    """A process already connected to Ray keeps its connection, but an address the
    experiment names that answers nothing is refused, as it is from a fresh process."""
    from confide.errors import ConfideError

    experiment = build_experiment({**CALBENCH, "backend": "ray", "ray_address": "127.0.0.1:1",
                                   "output_dir": str(tmp_path / "run")})
    with pytest.raises(ConfideError, match=r"cannot reach the Ray cluster at '127\.0\.0\.1:1'"):
        run_experiment(experiment, show_progress=False)
    assert not (tmp_path / "run").exists()
