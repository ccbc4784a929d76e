"""Which episodes a resume reuses, replays or plays again, pinned from mutation-testing
survivors of `runner.episode` (bench/mutation.py): a finished `ok` trace is reused, any
other is played again, and the calls a failed episode paid for are replayed from its
journal, never sent twice."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from confide.core.trace import ModelCall, read_trace
from confide.registry import get_benchmark
from confide.runner import build_experiment, run_experiment, run_experiment_async
from confide.runner.config import Experiment
from confide.runner.episode import episode_start, run_episode
from confide.runner.expand import expand
from confide.runner.journal import JOURNAL_DIR
from confide.runner.models import RunModels
from confide.runner.resolve import resolve_experiment
from confide.runner.results import read_csv
from confide.testing.json_server import BodyJsonServer


class _Provider(BodyJsonServer):
    """`/v1/chat/completions` on 127.0.0.1: a short reply to each demo seat, HTTP 400 (no
    retry helps) to every seat in `down`; keeps every request body it gets."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []
        self.down: set[str] = set()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.bodies.append(body)
        seat = str(body["messages"][0]["content"]).split()[2]  # "You are <seat> in ..."
        if seat in self.down:
            return 400, {"error": {"message": f"seat {seat} refused", "type": "invalid_request"}}
        return 200, {
            "id": f"chatcmpl-{len(self.bodies)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": f"{seat} passes it on"},
                }
            ],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
        }


@pytest.fixture
def provider() -> Iterator[_Provider]:
    fake = _Provider()
    yield fake
    fake.close()


RELAY = [
    {"id": "good", "seats": ["a", "b"], "rounds": 1},
    {"id": "bad", "seats": ["c", "d"], "rounds": 2},
]


def _relay(tmp_path: Path, base_url: str, relay: list[dict[str, Any]] = RELAY) -> Experiment:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in relay))
    return build_experiment(
        {
            "benchmark": "demo",
            "tasks": str(tasks),
            "lineups": ["openai-api/fake"],
            "output_dir": str(tmp_path / "run"),
            "model_options": {"openai-api": {"base_url": base_url, "retry": {"max_attempts": 1}}},
        }
    )


def _key(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], sort_keys=True)


def test_a_failed_episode_keeps_its_paid_calls_and_the_resume_sends_none_again(
    tmp_path: Path, provider: _Provider
) -> None:
    exp = _relay(tmp_path, provider.base_url)
    run_dir = tmp_path / "run"
    provider.down.add("d")  # c's first call is answered, then d's is refused
    first = run_experiment(exp, show_progress=False)
    good_rows = [r for r in read_csv(run_dir / "results.csv") if r["task_id"] == "good"]
    (failed,) = first.failed
    assert failed.startswith("bad__")
    (journal,) = (run_dir / JOURNAL_DIR).iterdir()  # the good episode's is gone
    assert journal.name.startswith("bad__")
    answered = {_key(b) for b in provider.bodies if "You are c" in b["messages"][0]["content"]}
    assert answered

    provider.down.clear()
    sent = len(provider.bodies)
    second = run_experiment(exp, show_progress=False)
    assert (second.skipped, second.failed, second.finished) == (1, [], 2)
    assert not [b for b in provider.bodies[sent:] if _key(b) in answered]
    (trace,) = (run_dir / "traces").glob("bad__*")
    calls = [e for e in read_trace(trace).events if isinstance(e, ModelCall)]
    assert sum(c.cached for c in calls) == len(answered) and len(calls) == 4
    assert not (run_dir / JOURNAL_DIR).exists()
    # the reused episode's rows keep what it spent (read back from its trace's calls)
    rows = read_csv(run_dir / "results.csv")
    again = [r for r in rows if r["task_id"] == "good"]
    assert again == [{k: v for k, v in r.items() if k != "error"} for r in good_rows]
    assert {r["status"] for r in rows} == {"ok"} and len(good_rows) == 2


def _open_journals() -> list[str]:
    """The journal files this process holds open."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if f"/{JOURNAL_DIR}/" in target:
            held.append(target)
    return held


async def test_a_stopped_paid_episode_keeps_its_journal_but_not_its_file_open(
    tmp_path: Path, provider: _Provider
) -> None:
    exp = _relay(tmp_path, provider.base_url, [{"id": "long", "seats": ["a", "b"], "rounds": 3}])
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    answer = provider.answer

    def stopping(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if len(provider.bodies) == 2:  # the first answer is journaled before this call
            loop.call_soon_threadsafe(stop.set)
        return answer(body)

    provider.answer = stopping  # type: ignore[method-assign]
    summary = await run_experiment_async(exp, show_progress=False, stop=stop)
    assert summary.interrupted and summary.finished == 0
    (journal,) = (tmp_path / "run" / JOURNAL_DIR).iterdir()  # kept for the resume
    assert len(journal.read_text().splitlines()) >= 2  # its header and the first answer
    assert _open_journals() == []


async def test_a_stopped_episode_of_free_models_ends_the_run_cleanly(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "long", "seats": ["a", "b"], "rounds": 40}) + "\n")
    exp = build_experiment(
        {
            "benchmark": "demo",
            "tasks": str(tasks),
            "lineups": ["mock/echo"],
            "concurrency": 1,
            "output_dir": str(tmp_path / "run"),
            "model_options": {"latency_s": 0.02},
        }
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(0.3, stop.set)
    summary = await run_experiment_async(exp, show_progress=False, stop=stop)
    assert summary.interrupted and summary.finished == 0
    assert not list((tmp_path / "run" / "traces").iterdir())


def test_a_damaged_finished_trace_is_played_again(tmp_path: Path) -> None:
    exp = build_experiment({"benchmark": "demo", "output_dir": str(tmp_path / "run")})
    run_experiment(exp, show_progress=False)
    damaged = sorted((tmp_path / "run" / "traces").iterdir())[0]
    damaged.write_bytes(gzip.compress(b"not a trace\n"))
    again = run_experiment(exp, show_progress=False)
    assert (again.skipped, again.finished, again.failed) == (2, 3, [])
    assert read_trace(damaged).footer is not None


def _demo_plan(tmp_path: Path, lineup: str, **fields: Any) -> Any:
    spec = get_benchmark("demo")
    exp = resolve_experiment(
        spec,
        build_experiment(
            {
                "benchmark": "demo",
                "lineups": [lineup],
                "output_dir": str(tmp_path / "run"),
                **fields,
            }
        ),
    )
    return spec, exp, expand(spec, exp)[0]


def test_the_header_holds_the_given_run_metadata_with_the_versions_apart(
    tmp_path: Path,
) -> None:
    """The header shows the run's own metadata (its start time, not the episode's),
    whatever keys it has and however it was read back (a worker gets it as JSON), the
    versions in their own field; each model's structured-output mode and connection
    limit appear only when some model has one."""
    spec, exp, plan = _demo_plan(tmp_path, "mock/echo")
    meta = json.loads(
        json.dumps(
            {"versions": {"confide": "1.0"}, "started_at": "2001-01-01T00:00:00Z", "zone": "eu"}
        )
    )
    header = episode_start(spec, plan, exp, {"seed": "1"}, meta=meta)
    assert header.config["host"] == {"started_at": "2001-01-01T00:00:00Z", "zone": "eu"}
    assert header.versions == {"confide": "1.0"}
    assert "structured_output" not in header.config and "max_connections" not in header.config
    modes, connections = {"openai-api/x": "tool"}, {"openai-api/x": 4}
    header = episode_start(spec, plan, exp, {}, None, meta, modes, connections)
    assert header.config["structured_output"] == modes
    assert header.config["max_connections"] == connections
    fresh = episode_start(spec, plan, exp, {})  # no metadata given: this process's
    assert fresh.config["host"]["cpu_count"] == os.cpu_count()
    assert "confide" in fresh.versions


async def test_an_episode_played_without_a_journal_folder_journals_nothing(
    tmp_path: Path, provider: _Provider
) -> None:
    """A worker with no shared run directory plays a paid episode without a journal."""
    options = {"openai-api": {"base_url": provider.base_url, "retry": {"max_attempts": 1}}}
    spec, exp, plan = _demo_plan(tmp_path, "openai-api/fake", model_options=options)
    traces = tmp_path / "run" / "traces"
    traces.mkdir(parents=True)
    models = RunModels(options=exp.model_options)
    footer = await run_episode(spec, plan, exp, traces, models, {}, asyncio.Event())
    assert footer is not None and footer.status == "ok" and provider.bodies
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["traces"]
