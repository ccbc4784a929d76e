"""Leak markers: where in an episode private information moved, linked to its cause.

Each benchmark measures leakage from different records, and each marker points at the
trace event (a delivered message) that caused it:
- CalBench (calbench.md 3.2, F.5): belief updates of the protocol-semantic VPS, read from
  belief_evidence.csv (one row per update, `event_index` into the trace), and the nonzero
  deltas of judge or reflection answers (`message_ids` they were given).
- Sotopia-ToM (sotopia_tom.md 4.1, A.7): the CPV violation events of the footer, each
  citing an utterance `R<round>.<turn>`.
- Incognita (incognita.md 4.2): disclosure-gate releases, each naming the message whose
  request the gate answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from confide.core.trace import MessageDelivered, Trace

LEAK_COLUMN = {"calbench": "belief_updates", "sotopia-tom": "violations",
               "incognita": "gate_releases"}
"""Per benchmark, the per-episode count that makes an episode "leaked" when above 0."""


@dataclass(frozen=True)
class Marker:
    """One leak: `event` is the index (in trace.events) of the causing event."""

    event: int
    kind: str
    metric: str
    label: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def leak_markers(trace: Trace, evidence: Sequence[Mapping[str, str]] = ()) -> list[Marker]:
    """The markers of one episode; `evidence` are its belief_evidence.csv rows (CalBench)."""
    bench = trace.header.benchmark
    if bench == "calbench":
        return _calbench(trace, evidence)
    if bench == "sotopia-tom":
        return _sotopia(trace)
    if bench == "incognita":
        return _incognita(trace)
    return []


def _by_message_id(trace: Trace) -> dict[int, int]:
    return {e.message.id: i for i, e in enumerate(trace.events) if isinstance(e, MessageDelivered)}


def _calbench(trace: Trace, evidence: Sequence[Mapping[str, str]]) -> list[Marker]:
    markers = [
        Marker(int(row["event_index"]), "belief_update", "VPS",
               f"agent{row['observer_agent']} now believes agent{row['target_agent']}'s "
               f"slot {row['slot']} is {float(row['belief_after']):.2f} busy "
               f"(was {float(row['belief_before']):.2f}; {row['source']})")
        for row in evidence
    ]
    from confide.envs.calbench.events import JudgeCase

    index = _by_message_id(trace)
    for event in trace.of(JudgeCase):
        deltas = event.data.deltas or {}
        moved = {t: d for t, d in deltas.items() if any(v != 0 for v in d)}
        for mid in event.data.message_ids if moved else []:
            if mid in index:
                markers.append(Marker(index[mid], event.name, "VPS",
                                      f"{event.seat} (round {event.round}) shifted beliefs "
                                      f"about {', '.join('agent' + t for t in moved)}"))
    return sorted(markers, key=lambda m: m.event)


def _sotopia(trace: Trace) -> list[Marker]:
    by_utterance = {
        f"R{e.message.round}.{e.message.turn}": i
        for i, e in enumerate(trace.events) if isinstance(e, MessageDelivered)
    }
    violations = (trace.footer.final_state.get("violations", []) if trace.footer else [])
    return [
        Marker(by_utterance[v["utterance"]], v["kind"], "CPV",
               f"{v['speaker']}: {v['item']} ({v['kind'].replace('_', ' ')}"
               + (f" to {v['recipient']}" if v.get("recipient") else "") + ")")
        for v in violations if v.get("utterance") in by_utterance
    ]


def _incognita(trace: Trace) -> list[Marker]:
    from confide.envs.incognita.events import GateRelease

    index = _by_message_id(trace)
    return [
        Marker(index[e.data.message_id], "gate_release", "gate_releases",
               f"{e.seat} released {e.data.field} (asked in message {e.data.message_id})")
        for e in trace.of(GateRelease)
        if e.data.message_id in index
    ]
