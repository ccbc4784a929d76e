"""Paid calls survive failures: every answered model call of an episode is
journaled as it arrives, and a resume replays them instead of paying again.

The must-show case: a local OpenAI-compatible server answers a Sotopia-ToM episode's
first 29 calls and then fails for good (HTTP 503, so the retries give up and the episode
ends `error`); once it is back, the resume sends none of those 29 requests again (the
server counts every body it gets) and the episode ends `ok`, with the same transcript as
an episode played in one go.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from confide.core.trace import read_trace
from confide.llm import ChatMessage, Completion, GenerateConfig
from confide.llm.providers.json_instance import minimal_instance
from confide.llm.request import request_key
from confide.runner import build_experiment, run_experiment, run_experiment_async
from confide.runner.journal import (
    JOURNAL_DIR,
    EpisodeJournal,
    JournaledModel,
    configuration_key,
    drop_finished,
    journal_path,
    journaled,
)
from confide.runner.results import read_csv
from confide.testing.json_server import BodyJsonServer

SRC = str(Path(__file__).resolve().parents[2] / "src")
FAIL_AT = 30
"""The first episode call the server refuses (its 30th)."""


class SotopiaServer(BodyJsonServer):
    """`/v1/chat/completions` answering a Sotopia-ToM agent with a public, substantive
    message (so the conversation runs to its turn limit) and any other request with a
    minimal instance of its schema. From the episode call `fail_at` on, while `down`,
    every request gets HTTP 503. `kill_at` (call number, pid) SIGKILLs the client when that
    call arrives; `on_call(number)` is told of each episode call answered. `bodies` holds
    every request body, probes included."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.fail_at = fail_at
        self.down = fail_at is not None
        self.kill_at: tuple[int, int] | None = None
        self.on_call: Callable[[int], object] | None = None
        self._answered = 0
        self._lock = threading.Lock()
        super().__init__()

    def episode_bodies(self) -> list[dict[str, Any]]:
        """The bodies of the episode's calls (the structured-output probe left out)."""
        return [b for b in self.bodies if not _probe(b)]

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.bodies.append(body)
            probe = _probe(body)
            if not probe and self.down and self._answered + 1 >= (self.fail_at or 0):
                return 503, {"error": {"message": "overloaded", "type": "server_error"}}
            if not probe and self.kill_at is not None and self._answered + 1 == self.kill_at[0]:
                os.kill(self.kill_at[1], signal.SIGKILL)
                return 503, {"error": {"message": "gone", "type": "server_error"}}
            if not probe:
                self._answered += 1
            number = self._answered
        if not probe and self.on_call is not None:
            self.on_call(number)
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
        if "action" in schema.get("properties", {}):
            reply: Any = {"action": {"action_type": "speak", "to": [],
                                     "content": f"Here is point {number}."}}
        else:
            reply = minimal_instance(schema) if schema else {"ok": True}
        content = json.dumps(reply)
        return 200, {
            "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }


def _probe(body: dict[str, Any]) -> bool:
    return body.get("max_tokens") == 8 and "Reply with" in str(body["messages"][-1]["content"])


@pytest.fixture
def server() -> Iterator[SotopiaServer]:
    fake = SotopiaServer(fail_at=FAIL_AT)
    yield fake
    fake.close()


def _sotopia(out: Path, base_url: str) -> Any:
    return build_experiment({
        "benchmark": "sotopia-tom", "limit": 1, "output_dir": str(out),
        "lineups": ["openai-api/fake"], "roles": {"judge": "openai-api/fake"},
        "options": {"max_turns": 36},
        "model_options": {"openai-api": {
            "base_url": base_url, "retry": {"max_attempts": 2, "base_delay_s": 0.0},
        }},
    })


def _key(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], sort_keys=True)


def test_a_resume_after_a_dead_server_pays_for_no_answered_call(
    tmp_path: Path, server: SotopiaServer
) -> None:
    out = tmp_path / "run"
    first = run_experiment(_sotopia(out, server.base_url), show_progress=False)
    (episode,) = first.failed
    answered = server.episode_bodies()[: FAIL_AT - 1]
    assert len(server.episode_bodies()) == FAIL_AT - 1 + 2  # call 30 tried twice
    failed = read_trace(out / "traces" / f"{episode}.jsonl.gz")
    assert failed.footer is not None and failed.footer.status == "error"
    assert "503" in (failed.footer.error or "") or "overloaded" in (failed.footer.error or "")
    # the failed episode keeps what it spent: its trace holds the 29 answered calls
    paid = [c for c in failed.model_calls() if c.completion is not None]
    assert len(paid) == FAIL_AT - 1
    assert sum(c.completion["usage"]["prompt_tokens"] for c in paid) == 100 * (FAIL_AT - 1)
    (journal,) = (out / JOURNAL_DIR).iterdir()
    assert len(journal.read_text().splitlines()) == 1 + FAIL_AT - 1  # header + 29 answers

    server.down = False  # the server recovers
    before = len(server.bodies)
    second = run_experiment(_sotopia(out, server.base_url), show_progress=False)
    assert second.failed == [] and (second.episodes, second.skipped) == (1, 0)
    resent = [b for b in server.bodies[before:] if not _probe(b)]
    answered_keys = {_key(b) for b in answered}
    assert not [b for b in resent if _key(b) in answered_keys]  # 0 of the 29 sent again
    trace = read_trace(out / "traces" / f"{episode}.jsonl.gz")
    assert trace.footer is not None and trace.footer.status == "ok"
    calls = trace.model_calls()
    assert [c.cached for c in calls[: FAIL_AT - 1]] == [True] * (FAIL_AT - 1)
    assert not any(c.cached for c in calls[FAIL_AT - 1 :])
    assert len(resent) == len(calls) - (FAIL_AT - 1)
    # replayed calls keep the usage that was paid for them, so the spend counts them once
    assert all(c.completion is not None and c.completion["usage"]["prompt_tokens"] == 100
               for c in calls)
    assert {r["status"] for r in read_csv(out / "results.csv")} == {"ok"}
    assert not (out / JOURNAL_DIR).exists()  # removed once the episode is ok

    # the same episode played in one go says the same things
    whole = SotopiaServer()
    try:
        run_experiment(_sotopia(tmp_path / "whole", whole.base_url), show_progress=False)
    finally:
        whole.close()
    again = read_trace(tmp_path / "whole" / "traces" / f"{episode}.jsonl.gz")
    assert [m.text for m in again.messages()] == [m.text for m in trace.messages()]
    assert len(again.messages()) > FAIL_AT
    assert again.footer is not None and again.footer.metrics == trace.footer.metrics


def _completion(text: str) -> Completion:
    return Completion(model="openai-api/x", text=text)


def test_the_journal_reads_back_its_answers_in_order_and_drops_a_torn_line(
    tmp_path: Path,
) -> None:
    fingerprint = {"seed": "1"}
    journal = EpisodeJournal.open(tmp_path, "ep", fingerprint)
    assert len(journal) == 0 and not journal.path.exists()  # created with the first answer
    journal.append("k1", _completion("a"))
    journal.append("k2", _completion("b"))
    journal.append("k1", _completion("c"))
    journal.close()
    with journal.path.open("ab") as handle:
        handle.write(b'{"key": "k3", "compl')  # a write torn by a power loss
    again = EpisodeJournal.open(tmp_path, "ep", fingerprint)
    assert len(again) == 3
    assert again.take("k3") is None
    taken = [again.take("k1"), again.take("k2"), again.take("k1"), again.take("k1")]
    assert [c.text if c else None for c in taken] == ["a", "b", "c", None]
    again.append("k3", _completion("d"))  # the torn tail is cut off before appending
    again.settle(ok=False)
    third = EpisodeJournal.open(tmp_path, "ep", fingerprint)
    assert len(third) == 4 and third.take("k3") == _completion("d")
    third.settle(ok=True)
    assert not third.path.exists()


def test_another_configuration_never_reads_the_answers(tmp_path: Path) -> None:
    mine = EpisodeJournal.open(tmp_path, "ep", {"seed": "1"})
    mine.append("k", _completion("mine"))
    mine.close()
    other = EpisodeJournal.open(tmp_path, "ep", {"seed": "2"})
    assert other.path != mine.path and len(other) == 0 and other.take("k") is None
    assert journal_path(tmp_path, "ep", {"seed": "1"}).name == (
        f"ep.{configuration_key({'seed': '1'})}.jsonl"
    )
    # a file whose header names another configuration is not read, even under this name
    other.path.write_bytes(mine.path.read_bytes())
    assert len(EpisodeJournal.open(tmp_path, "ep", {"seed": "2"})) == 0


def test_leftover_journals_of_finished_episodes_are_removed(tmp_path: Path) -> None:
    for episode in ("done", "open.with.dots"):
        journal = EpisodeJournal.open(tmp_path, episode, {})
        journal.append("k", _completion("x"))
        journal.close()
    drop_finished(tmp_path, {"done", "open"})
    assert [p.name.split(".")[0] for p in tmp_path.iterdir()] == ["open"]


class _Counting:
    name = "openai-api/x"

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, messages: Any, *, config: GenerateConfig) -> Completion:
        self.calls += 1
        return _completion(f"answer {self.calls}")


async def test_a_journaled_model_replays_then_goes_live(tmp_path: Path) -> None:
    inner = _Counting()
    model = journaled("openai-api/x", inner)
    assert isinstance(model, JournaledModel)
    assert journaled("mock/echo", inner) is inner  # free answers are not journaled
    ask = [ChatMessage(role="user", content="hi")]
    config = GenerateConfig()
    assert (await model.generate(ask, config=config)).text == "answer 1"  # no episode scope
    earlier = EpisodeJournal.open(tmp_path, "ep", {})  # an earlier attempt's answer
    earlier.append(request_key(ask, config, "openai-api/x"), _completion("recorded"))
    earlier.close()
    journal = EpisodeJournal.open(tmp_path, "ep", {})
    with journal.scope():
        replayed = await model.generate(ask, config=config)
        live = await model.generate(ask, config=config)
    assert (replayed.text, replayed.cached, live.text, live.cached) == (
        "recorded", True, "answer 2", False
    )
    assert inner.calls == 2 and journal.replayed == 1
    journal.close()
    lines = journal.path.read_text().splitlines()  # header, the earlier answer, the new one
    assert json.loads(lines[0])["episode_id"] == "ep" and len(lines) == 3


KILL_AT = 16
"""The episode call at whose arrival the server SIGKILLs the run (15 answered before)."""


def test_a_run_killed_mid_episode_resumes_from_its_journal(tmp_path: Path) -> None:
    fake = SotopiaServer()
    out = tmp_path / "run"
    experiment = tmp_path / "experiment.yaml"
    fields = _sotopia(out, fake.base_url).model_dump(mode="json", exclude_unset=True)
    experiment.write_text(json.dumps(fields))  # JSON is YAML
    cmd = [sys.executable, "-m", "confide", "run", str(experiment), "--no-progress"]
    proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": SRC},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fake.kill_at = (KILL_AT, proc.pid)
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
    assert not list((out / "traces").glob("*.jsonl.gz"))  # killed before any trace ended
    answered = fake.episode_bodies()[: KILL_AT - 1]

    fake.kill_at = None
    before = len(fake.bodies)
    try:
        summary = run_experiment(_sotopia(out, fake.base_url), show_progress=False)
    finally:
        fake.close()
    assert summary.failed == [] and summary.finished == 1
    answered_keys = {_key(b) for b in answered}
    resent = [b for b in fake.bodies[before:] if not _probe(b)]
    assert resent and not [b for b in resent if _key(b) in answered_keys]
    (path,) = (out / "traces").glob("*.jsonl.gz")
    calls = read_trace(path).model_calls()
    assert sum(c.cached for c in calls) == KILL_AT - 1
    assert not (out / JOURNAL_DIR).exists()


async def test_a_stopped_episode_keeps_its_journal_and_resumes_from_it(tmp_path: Path) -> None:
    fake = SotopiaServer()
    out = tmp_path / "run"
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    fake.on_call = lambda number: loop.call_soon_threadsafe(stop.set) if number == 10 else None
    try:
        first = await run_experiment_async(_sotopia(out, fake.base_url), show_progress=False,
                                           stop=stop)
        assert first.interrupted and first.finished == 0
        assert not list(out.rglob("*.partial"))
        (journal,) = (out / JOURNAL_DIR).iterdir()
        recorded = len(journal.read_text().splitlines()) - 1
        assert recorded >= 9
        fake.on_call = None
        before = len(fake.bodies)
        second = await run_experiment_async(_sotopia(out, fake.base_url), show_progress=False)
    finally:
        fake.close()
    assert second.failed == [] and second.finished == 1
    (path,) = (out / "traces").glob("*.jsonl.gz")
    calls = read_trace(path).model_calls()
    assert sum(c.cached for c in calls) == recorded
    assert len([b for b in fake.bodies[before:] if not _probe(b)]) == len(calls) - recorded
