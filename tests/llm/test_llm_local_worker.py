"""The local model's worker process: a native crash fails one call with a typed error
naming the cause, the next call gets a new worker, a run records the episode as an
error and goes on, and no worker outlives its parent. The stand-in engine needs no
llama.cpp; the run test is repeated with the real model (marked `local_model`)."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_local_stand_in import REPLY_PREFIX, StandInEngine, TripwiredLlama, arm, wait_tripped

from confide.core.trace import ModelCall, read_trace
from confide.llm import ChatMessage, GenerateConfig, ModelCrashError, ModelError, get_model
from confide.llm.providers import local, local_worker
from confide.llm.providers.local_worker import EngineFactory, LocalWorker, death_cause
from confide.runner import build_experiment, run_experiment_async
from confide.runner.results import read_csv

CONFIG = GenerateConfig(max_tokens=16)
UseEngine = Callable[..., EngineFactory]


def say(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def alive(pid: int) -> bool:
    """Whether any thread of `pid` still runs. A zombie (left to a non-reaping init)
    counts as dead, but a zombie group leader whose other threads (numpy's BLAS pool)
    are still exiting does not: its parent cannot reap it yet."""
    states = []
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            states.append(stat.read_text().rsplit(")", 1)[1].split()[0])
        except FileNotFoundError:  # that thread has just gone
            continue
    return any(state != "Z" for state in states)


def wait_dead(pid: int, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


@pytest.fixture
def make_worker(tmp_path: Path) -> Iterator[Callable[..., LocalWorker]]:
    """Stand-in workers, stopped after the test."""
    made: list[LocalWorker] = []

    def make(**options: Any) -> LocalWorker:
        factory = functools.partial(StandInEngine, tripwire=tmp_path, **options)
        made.append(LocalWorker(factory, {"path": "w.gguf"}, "local/stand-in"))
        return made[-1]

    yield make
    for worker in made:
        worker.close()


@pytest.fixture
def use_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[UseEngine]:
    """Make `local/smollm2` run the given engine (in a fresh worker table, whose
    workers are stopped after the test)."""
    shared: dict[Any, LocalWorker] = {}
    monkeypatch.setattr(local_worker, "_shared", shared)

    def use(engine: Callable[..., Any], *, real_weights: bool = False, **options: Any) -> Any:
        factory = functools.partial(engine, tripwire=tmp_path, **options)
        monkeypatch.setattr(local, "engine_for", lambda model: factory)
        if not real_weights:
            monkeypatch.setattr(local, "find_weights", lambda model: tmp_path / "stand-in.gguf")
        return factory

    yield use
    for worker in shared.values():
        worker.close()


def test_one_worker_process_answers_every_call(make_worker: Callable[..., LocalWorker]) -> None:
    """One process serves every call; an engine exception fails only its call; a worker
    found dead between calls is replaced without an error; close() reaps it."""
    worker = make_worker()
    assert worker.pid is None  # started by the first call
    first, second = (worker.complete(say(t), CONFIG) for t in ("hello", "again"))
    assert first["choices"][0]["message"]["content"] == REPLY_PREFIX + "hello"
    assert first["pid"] == second["pid"] == worker.pid != os.getpid()
    assert first["settings"] == {"path": "w.gguf"}
    with pytest.raises(ModelError, match="RuntimeError: the stand-in refuses") as caught:
        worker.complete(say("raise"), CONFIG)
    assert caught.value.kind == "bad_request" and type(caught.value) is ModelError
    assert worker.pid == first["pid"]
    os.kill(first["pid"], signal.SIGKILL)
    assert wait_dead(first["pid"])
    replaced = worker.complete(say("hi"), CONFIG)["pid"]
    assert replaced != first["pid"]
    worker.close()
    assert worker.pid is None and not alive(replaced)


def test_native_crash_fails_the_call_and_the_next_call_gets_a_new_worker(
    make_worker: Callable[..., LocalWorker],
) -> None:
    worker = make_worker()
    pid = worker.complete(say("hi"), CONFIG)["pid"]
    for how, cause in (("segv", "SIGSEGV"), ("abort", "SIGABRT"), ("exit", "exit code 3")):
        with pytest.raises(ModelCrashError) as caught:
            worker.complete(say(f"crash:{how}"), CONFIG)
        error = caught.value
        assert (error.cause, error.kind, error.transient) == (cause, "crash", False)
        assert str(error) == (
            f"local/stand-in: local model worker died with {cause} during the call "
            f"(pid {pid}); the next call starts a new one (permanent error)"
        )
        assert not alive(pid) and worker.pid is None
        restarted = worker.complete(say("hi"), CONFIG)["pid"]
        assert restarted != pid and worker.pid == restarted
        pid = restarted


def test_crash_or_failure_while_loading(make_worker: Callable[..., LocalWorker]) -> None:
    crashing = make_worker(crash_on_load="abort")
    with pytest.raises(ModelCrashError, match="died with SIGABRT while loading the model"):
        crashing.complete(say("hi"), CONFIG)
    failing = make_worker(fail_on_load=True)
    with pytest.raises(ModelError, match="failed to load: ValueError: not a GGUF file") as caught:
        failing.complete(say("hi"), CONFIG)
    assert caught.value.kind == "config"
    assert crashing.pid is None and failing.pid is None


def test_death_cause_names() -> None:
    assert death_cause(-signal.SIGKILL) == "SIGKILL"
    assert death_cause(-signal.SIGSEGV) == "SIGSEGV"
    assert death_cause(1) == "exit code 1" and death_cause(-200) == "signal 200"


async def test_crash_through_the_model_stack_is_typed_and_not_retried(
    use_engine: UseEngine,
) -> None:
    use_engine(StandInEngine)
    model = get_model("local/smollm2")
    with pytest.raises(ModelCrashError, match="died with SIGSEGV") as caught:
        await model.generate([ChatMessage(role="user", content="crash:segv")], config=CONFIG)
    # the retry wrapper re-raises it annotated, as the same class with the same cause
    assert (caught.value.cause, caught.value.attempts) == ("SIGSEGV", 1)
    assert model.meter.total().retries == 0
    reply = await model.generate([ChatMessage(role="user", content="hi")], config=CONFIG)
    assert reply.text == REPLY_PREFIX + "hi" and reply.usage.prompt_tokens == 1


def test_one_worker_per_settings(use_engine: UseEngine) -> None:
    use_engine(StandInEngine)
    first, second = (local.make_local_model("smollm2") for _ in range(2))
    assert first.worker is second.worker
    assert local.make_local_model("smollm2", prefix_cache_mb=0).worker is not first.worker
    assert first.worker.kwargs["cache_mb"] == local.DEFAULT_PREFIX_CACHE_MB


_ORPHAN = """
import functools, sys, time
from pathlib import Path
from llm_local_stand_in import StandInEngine
from confide.llm import GenerateConfig
from confide.llm.providers.local_worker import LocalWorker
factory = functools.partial(StandInEngine, tripwire=Path(sys.argv[1]))
worker = LocalWorker(factory, {}, "local/stand-in")
print(worker.complete([{"role": "user", "content": "hi"}], GenerateConfig())["pid"], flush=True)
if sys.argv[2] == "hang":
    time.sleep(600)
"""


@pytest.mark.parametrize("end", ["exit", "hang"])
def test_no_worker_outlives_its_parent(tmp_path: Path, end: str) -> None:
    """Normal exit stops the worker (finalizer at exit); a SIGKILLed parent's worker
    exits on EOF."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_ORPHAN), str(tmp_path), end],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    assert alive(pid)
    if end == "hang":
        parent.kill()
    assert parent.wait(timeout=30) == (-signal.SIGKILL if end == "hang" else 0)
    assert wait_dead(pid)


async def sigkill_mid_call_in_a_run(
    tmp_path: Path, episodes: int, model_options: dict[str, Any] | None = None
) -> None:
    """Run `episodes` demo episodes on `local/smollm2`, SIGKILL the worker during the
    first model call: that episode is an error naming the cause, the others are ok."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "seats": ["a", "b"], "rounds": 1}) + "\n"
            for i in range(episodes)
        )
    )
    run_dir = tmp_path / "run"
    experiment = build_experiment(
        {
            "benchmark": "demo",
            "tasks": str(tasks),
            "lineups": ["local/smollm2"],
            "output_dir": str(run_dir),
            "model_options": model_options or {},
        }
    )
    arm(tmp_path)
    run = asyncio.create_task(run_experiment_async(experiment, show_progress=False))
    killed = await asyncio.to_thread(wait_tripped, tmp_path)
    os.kill(killed, signal.SIGKILL)
    summary = await run

    assert summary.episodes == episodes and len(summary.failed) == 1
    cause = f"local model worker died with SIGKILL during the call (pid {killed})"
    rows = {r["episode_id"]: r for r in read_csv(run_dir / "results.csv")}
    for path in sorted((run_dir / "traces").glob("*.jsonl.gz")):
        trace = read_trace(path)
        episode = trace.header.episode_id
        calls = [e for e in trace.events if isinstance(e, ModelCall)]
        assert trace.footer is not None
        if episode in summary.failed:
            assert trace.footer.status == "error" and rows[episode]["status"] == "error"
            for error in (trace.footer.error, rows[episode]["error"]):
                assert error is not None and "ModelCrashError" in error and cause in error
            assert len(calls) == 1 and calls[0].error is not None and cause in calls[0].error
        else:
            assert trace.footer.status == "ok" and rows[episode]["status"] == "ok"
            assert len(calls) == 2 and all(c.completion is not None for c in calls)


async def test_sigkill_mid_call_fails_one_episode_and_the_run_goes_on(
    tmp_path: Path, use_engine: UseEngine
) -> None:
    use_engine(StandInEngine)
    await sigkill_mid_call_in_a_run(tmp_path, episodes=3)


@pytest.mark.local_model
@pytest.mark.slow
async def test_sigkill_mid_call_with_the_real_model(tmp_path: Path, use_engine: UseEngine) -> None:
    use_engine(TripwiredLlama, real_weights=True)
    # one thread: llama.cpp's threads spin-wait for each other, slow on busy cores
    await sigkill_mid_call_in_a_run(tmp_path, episodes=2, model_options={"n_threads": 1})
