"""Sotopia-ToM in `confide view` (core/viewing.py): the CPV violations (the Sotopia-ToM paper
4.1, A.7) of the episode's footer, each pointing at the utterance `R<round>.<turn>` it
cites; an episode's leak count is its `violations` column."""

from __future__ import annotations

from confide.core.trace import MessageDelivered, Trace
from confide.core.viewing import LeakMarker, ViewHooks, counted
from confide.envs.sotopia_tom.report_sections import SECTIONS


def leak_markers(trace: Trace) -> list[LeakMarker]:
    """One marker per violation whose utterance was delivered."""
    by_utterance = {
        f"R{e.message.round}.{e.message.turn}": i
        for i, e in enumerate(trace.events) if isinstance(e, MessageDelivered)
    }
    violations = trace.footer.final_state.get("violations", []) if trace.footer else []
    return [
        LeakMarker(by_utterance[v["utterance"]], v["kind"], "CPV",
                   f"{v['speaker']}: {v['item']} ({v['kind'].replace('_', ' ')}"
                   + (f" to {v['recipient']}" if v.get("recipient") else "") + ")")
        for v in violations if v.get("utterance") in by_utterance
    ]


VIEW = ViewHooks(leaks=counted("violations", leak_markers), sections=SECTIONS)
