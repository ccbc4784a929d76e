"""CalBench in `confide view` (core/viewing.py): where private calendar information moved.

Leak events are the belief updates of the protocol-semantic VPS (calbench.md 3.2, F.5),
read from the run's belief_evidence.csv (one row per update, `event_index` into the
trace), and the nonzero deltas of judge or reflection answers, each pointing at the
delivered messages the judge was given (`message_ids`). An episode's leak count is its
number of belief updates.
"""

from __future__ import annotations

import csv
import gzip
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from confide.core.trace import Trace
from confide.core.viewing import LeakMarker, ViewHooks, delivery_index
from confide.envs.calbench.events import JudgeCase

EVIDENCE = ("belief_evidence.csv.gz", "belief_evidence.csv")
"""Where outputs/privacy.py writes the evidence rows (the plain name: older runs)."""
SUMMARY = "game_summary.csv"
"""Its per-game totals, written with the evidence (outputs/privacy.py)."""


class BeliefLeaks:
    """A run's belief updates: counted per episode id in one pass over the evidence, and
    read again (that episode's rows only) for one episode's markers. A 10,000-game run
    has about 1.7 million evidence rows, gigabytes as dicts (issue 12 item 11)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = next((run_dir / name for name in EVIDENCE if (run_dir / name).is_file()),
                         None)
        self.header: list[str] = []
        summary = run_dir / SUMMARY
        self.counts = (
            _observation_counts(summary) if self.path is not None and summary.is_file()
            else Counter(game for game, _ in self._evidence())
        )

    def _evidence(self) -> Iterator[tuple[str, list[str]]]:
        """(game id, row) per evidence row: the row as a list (cells in header order)."""
        if self.path is None:
            return
        opener = gzip.open if self.path.suffix == ".gz" else open
        with opener(self.path, "rt", newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            self.header = next(reader, [])
            column = self.header.index("game_id")
            for row in reader:
                yield row[column], row

    def count(self, row: Mapping[str, str]) -> int:
        return self.counts.get(row.get("episode_id", ""), 0)

    def markers(self, trace: Trace) -> list[LeakMarker]:
        episode = trace.header.episode_id
        evidence = [dict(zip(self.header, row, strict=False)) for game, row in self._evidence()
                    if game == episode] if self.counts.get(episode) else []
        return leak_markers(trace, evidence)


def _observation_counts(summary: Path) -> Counter[str]:
    """Game id -> its evidence rows, from the game summary written with them: a game's
    `observation_count` sums its pairs' updates, and every update is one evidence row,
    so a report need not read the evidence (250,000 rows in the main job) to count it."""
    with summary.open(newline="", encoding="utf-8") as handle:
        return Counter({r["game_id"]: int(r["observation_count"])
                        for r in csv.DictReader(handle) if r["observation_count"] != "0"})


def leak_markers(trace: Trace, evidence: Sequence[Mapping[str, str]]) -> list[LeakMarker]:
    """The episode's belief updates (`evidence`, its belief_evidence.csv rows) and judge
    deltas, in trace order."""
    markers = [
        LeakMarker(int(row["event_index"]), "belief_update", "VPS",
                   f"agent{row['observer_agent']} now believes agent{row['target_agent']}'s "
                   f"slot {row['slot']} is {float(row['belief_after']):.2f} busy "
                   f"(was {float(row['belief_before']):.2f}; {row['source']})")
        for row in evidence
    ]
    index = delivery_index(trace)
    for event in trace.of(JudgeCase):
        deltas = event.data.deltas or {}
        moved = {t: d for t, d in deltas.items() if any(v != 0 for v in d)}
        for mid in event.data.message_ids if moved else []:
            if mid in index:
                markers.append(LeakMarker(index[mid], event.name, "VPS",
                                          f"{event.seat} (round {event.round}) shifted "
                                          f"beliefs about "
                                          f"{', '.join('agent' + t for t in moved)}"))
    return sorted(markers, key=lambda m: m.event)


VIEW = ViewHooks(leaks=BeliefLeaks)
