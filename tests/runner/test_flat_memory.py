"""A run's memory does not grow with its episode count.

The same demo experiment is run in-process at N and 3N episodes under tracemalloc; the
bytes a run holds when its episodes are played (what it keeps per finished episode) and its
peak over the whole run, outputs included, may grow by a few hundred bytes per episode
(its plan, id and status), never by the episode's rows, footer or trace. Measured here:
0.56 KB per episode held and 1.0 KB at the peak; before the runner shared one lineup tuple
between plans and ran a fixed pool of workers (not a task per episode), and before the
report counted CalBench leaks without reading every results row at once, 1.5 and 2.5 KB.
One episode runs at a time: with several in flight the peak depends on how many overlap,
which moved it by up to 250 KB between identical runs (a CI failure), against 10 KB here.
"""

import gc
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import confide.runner.execute as execute
from confide.runner import build_experiment, run_experiment

HELD, PEAK = 1_000, 1_800
"""Bytes per episode a run may add: held when playing ends, and at its peak."""


def _measure(
    tmp_path: Path, repetitions: int, monkeypatch: pytest.MonkeyPatch, workers: int = 1
) -> tuple[int, int]:
    """(traced bytes when the episodes are played, peak traced bytes of the whole run)."""
    played: list[int] = []
    outputs = execute.write_run_outputs

    def measured(*args: Any, **kwargs: Any) -> Any:
        gc.collect()
        played.append(tracemalloc.get_traced_memory()[0])
        return outputs(*args, **kwargs)

    monkeypatch.setattr(execute, "write_run_outputs", measured)
    experiment = build_experiment({
        "benchmark": "demo", "repetitions": repetitions,
        "output_dir": str(tmp_path / f"r{repetitions}"), "concurrency": 1, "workers": workers,
    })
    gc.collect()
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    summary = run_experiment(experiment, show_progress=False)
    assert summary.finished == summary.episodes == 3 * repetitions
    return played[0] - start, tracemalloc.get_traced_memory()[1] - start


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("workers", "small", "large"), [(1, 15, 45), (2, 22, 52)])
def test_memory_per_episode_stays_flat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, traced: None, workers: int, small: int,
    large: int,
) -> None:
    """In one process (45 and 135 episodes) and with a pool of two (66 and 156: both
    enough for a pool, `runner.pool.MIN_POOLED`), the run's own process."""
    _measure(tmp_path / "warm", small, monkeypatch, workers)  # imports and caches, once
    held_small, peak_small = _measure(tmp_path, small, monkeypatch, workers)
    held_large, peak_large = _measure(tmp_path, large, monkeypatch, workers)
    more = 3 * (large - small)
    assert (held_large - held_small) / more < HELD
    assert (peak_large - peak_small) / more < PEAK
