"""CalBench's leak counts for the report and the viewer (`view.BeliefLeaks`): per-episode
counts from one pass over belief_evidence.csv.gz, an episode's own rows for its markers,
and no evidence row held (a 10,000-game run has about 1.7 million)."""

import csv
import gc
import gzip
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import confide.envs.calbench.view as view

COLUMNS = ["trace_path", "game_id", "event_index", "round", "target_agent",
           "observer_agent", "slot", "source", "evidence", "strength", "belief_before",
           "belief_after"]


def _write_evidence(run_dir: Path, games: int) -> dict[str, list[dict[str, str]]]:
    """Game i gets i % 7 rows (game 0 none: absent from the file); returns them by game."""
    rows: dict[str, list[dict[str, str]]] = {}
    with gzip.open(run_dir / "belief_evidence.csv.gz", "wt", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, COLUMNS)
        out.writeheader()
        for i in range(games):
            game = f"task-{i:04d}__imap__dm__r0__{i:08x}"
            for k in range(i % 7):
                row = dict(zip(COLUMNS, [f"traces/{game}.jsonl.gz", game, str(10 + k), "0",
                                         "1", "2", str(k), "imap_cost", "1.0", "1.0", "0.5",
                                         "1.0"], strict=True))
                rows.setdefault(game, []).append(row)
                out.writerow(row)
    return rows


def test_counts_and_markers_read_the_episodes_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _write_evidence(tmp_path, 30)
    leaks = view.BeliefLeaks(tmp_path)
    for i in range(30):
        game = f"task-{i:04d}__imap__dm__r0__{i:08x}"
        assert leaks.count({"episode_id": game}) == i % 7
    given: list[list[dict[str, str]]] = []

    def capture(trace: Any, evidence: list[dict[str, str]]) -> list[Any]:
        given.append(list(evidence))
        return []

    monkeypatch.setattr(view, "leak_markers", capture)
    for game in ("task-0013__imap__dm__r0__0000000d", "task-0000__imap__dm__r0__00000000"):
        leaks.markers(SimpleNamespace(header=SimpleNamespace(episode_id=game)))  # type: ignore[arg-type]
    assert given == [rows["task-0013__imap__dm__r0__0000000d"], []]
    assert view.BeliefLeaks(tmp_path / "nowhere").count({"episode_id": "x"}) == 0


def test_no_evidence_row_is_held(tmp_path: Path) -> None:
    games = 600  # 1,800 rows: about 1 KB each as dicts
    rows = sum(len(r) for r in _write_evidence(tmp_path, games).values())
    view.BeliefLeaks(tmp_path)  # warm up imports
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        leaks = view.BeliefLeaks(tmp_path)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert sum(leaks.counts.values()) == rows
    assert held < 250 * games  # an id and a count per game; every row would be ~2 MB
