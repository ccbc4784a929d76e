"""Guarantees pinned by behaviour: a write is durable before it becomes
visible, a registered secret never reaches a trace batch in clear text, and the Ray
driver counts a trace a worker finished in the shared run directory."""

from __future__ import annotations

import asyncio
import gzip
import os
import pickle
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from confide import atomic, redaction
from confide.core import EpisodeEnd, EpisodeStart, TraceWriter
from confide.registry import get_benchmark
from confide.runner.ray_backend import RayEpisodes

SECRET = "sk-pin-0123456789abcdef"


def test_the_bytes_are_on_disk_before_the_rename_shows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fsync of the complete temporary file must happen before the rename: otherwise a
    crash right after the rename can leave the target empty."""
    seen: list[tuple[str, Any]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        seen.append(("fsync", os.fstat(fd).st_size))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        seen.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    target = tmp_path / "out.json"
    atomic.write_text(target, "x" * 1000)
    atomic.write_bytes(target, b"y" * 10)
    assert seen == [("fsync", 1000), ("replace", "out.json"),
                    ("fsync", 10), ("replace", "out.json")]
    assert target.read_bytes() == b"y" * 10


@pytest.fixture
def secret() -> Any:
    assert redaction.register_secret(SECRET)
    yield SECRET
    redaction.forget_secret(SECRET)


def test_a_batch_with_a_secret_and_no_url_is_scrubbed(secret: str) -> None:
    lines = (b'{"kind": "message", "text": "hello"}\n'
             + f'{{"kind": "model_call", "text": "key is {secret}"}}'.encode())
    assert b"://" not in lines
    scrubbed = redaction.scrub_json_lines(lines)
    assert secret.encode() not in scrubbed
    assert scrubbed.split(b"\n")[0] == b'{"kind": "message", "text": "hello"}'
    assert b"key is ***" in scrubbed


def test_a_registered_secret_never_reaches_a_trace_file(tmp_path: Path, secret: str) -> None:
    writer = TraceWriter(tmp_path, "ep")
    writer.emit(EpisodeStart(episode_id="ep", benchmark="demo", scenario_id="s", seed=1,
                             config={"note": f"the key {secret}"}))
    writer.finish(EpisodeEnd(error=f"failed with {secret}"))
    data = writer.final_path.read_bytes()
    text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    assert secret.encode() not in text and b"***" in text


class _ActorDied(Exception):
    pass


def _driver(trace_dir: Path, shared: bool) -> RayEpisodes:
    """A driver without Ray: only the parts `play` uses when a call comes back empty."""
    driver = RayEpisodes.__new__(RayEpisodes)
    driver._ray = SimpleNamespace(exceptions=SimpleNamespace(RayActorError=_ActorDied))
    driver._trace_dir = trace_dir
    driver._probe = object() if shared else None  # type: ignore[assignment]
    driver._spec = get_benchmark("demo")
    driver._roles = None

    def enqueue(call: Any) -> None:  # the run stopped: the call comes back with nothing
        call.reply.set_result(None)

    driver._enqueue = enqueue  # type: ignore[method-assign]
    return driver


def _finished_trace(trace_dir: Path, episode_id: str) -> None:
    writer = TraceWriter(trace_dir, episode_id)
    writer.emit(EpisodeStart(episode_id=episode_id, benchmark="demo", scenario_id="s", seed=1))
    writer.finish(EpisodeEnd(rows=[{"seat": "a", "score": 0.75}]))


def test_the_driver_counts_a_trace_a_worker_finished_in_the_shared_directory(
    tmp_path: Path,
) -> None:
    _finished_trace(tmp_path, "done")
    plan: Any = SimpleNamespace(
        episode_id="done", task=SimpleNamespace(id="s"), lineup_text="a", condition=None,
        repetition=0, seed=1,
    )
    entry = asyncio.run(_driver(tmp_path, shared=True).play(plan))
    assert entry is not None and entry.status == "ok"
    assert [row["score"] for row in pickle.loads(entry.rows)] == [0.75]
    # not shared (the worker returns its bytes): nothing in the directory is trusted
    assert asyncio.run(_driver(tmp_path, shared=False).play(plan)) is None
    # shared but the episode never finished: not counted
    absent: Any = SimpleNamespace(episode_id="absent")
    assert asyncio.run(_driver(tmp_path, shared=True).play(absent)) is None
