"""The on-disk response cache under many concurrent writers (Ray workers on
several nodes share one cache directory): every entry read back is whole and is one
that some writer stored, and no temporary file is left behind."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from confide.atomic import TEMP_SUFFIX
from confide.llm import Completion, ResponseCache

KEYS = [f"{i:02x}" * 32 for i in range(12)]
WRITERS, ROUNDS = 4, 15


def _hammer(directory: str, writer: int) -> None:
    """Store every key ROUNDS times (a long reply, so writes take time), reading back
    in between; exit 1 if a read ever sees a torn or foreign entry."""
    cache = ResponseCache(directory)
    for round_ in range(ROUNDS):
        for key in KEYS:
            text = f"{key}:{writer}:{round_:02d}:" + "x" * 20_000  # one length for every writer
            cache.put(key, {"key": key}, Completion(model="mock/echo", text=text))
            seen = cache.get(key)
            if seen is None or not seen.text.startswith(f"{key}:") or len(seen.text) != len(text):
                raise SystemExit(1)


def test_concurrent_writers_leave_whole_entries(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_hammer, args=(str(tmp_path), w)) for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0] * WRITERS
    cache = ResponseCache(tmp_path)
    for key in KEYS:
        entry = cache.get(key)
        assert entry is not None
        key_seen, writer, round_, _ = entry.text.split(":")
        assert key_seen == key and 0 <= int(writer) < WRITERS and 0 <= int(round_) < ROUNDS
    assert not list(tmp_path.rglob(f"*{TEMP_SUFFIX}"))
