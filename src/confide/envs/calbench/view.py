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
from collections.abc import Mapping, Sequence
from pathlib import Path

from confide.core.trace import Trace
from confide.core.viewing import LeakMarker, ViewHooks, delivery_index
from confide.envs.calbench.events import JudgeCase

EVIDENCE = ("belief_evidence.csv.gz", "belief_evidence.csv")
"""Where outputs/privacy.py writes the evidence rows (the plain name: older runs)."""


class BeliefLeaks:
    """A run's belief updates, read once, by episode id."""

    def __init__(self, run_dir: Path) -> None:
        self.evidence: dict[str, list[dict[str, str]]] = {}
        path = next((run_dir / name for name in EVIDENCE if (run_dir / name).is_file()), None)
        if path is None:
            return
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                self.evidence.setdefault(row["game_id"], []).append(row)

    def count(self, row: Mapping[str, str]) -> int:
        return len(self.evidence.get(row.get("episode_id", ""), []))

    def markers(self, trace: Trace) -> list[LeakMarker]:
        return leak_markers(trace, self.evidence.get(trace.header.episode_id, []))


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
