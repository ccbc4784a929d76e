"""Who saw what: per participant, the private items of others that reached it. (What only
one participant held beyond its private items, such as an Incognita desk's tool calls, is
the benchmark's `desk_panels` hook: core/viewing.py.)

Exposure is read from the events each participant observed (`core.trace_view.visible`):
the first delivered message or environment record whose text contains another seat's
private item (the benchmark's `private_markers`) is where that item reached it. Model calls
are left out: their prompts repeat what was delivered, and the marker should point at the
delivery.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from confide.core.trace import EnvEvent, MessageDelivered, Trace, TraceEvent
from confide.core.trace_view import visible


def exposures(
    trace: Trace, names: Sequence[str], private: Mapping[str, Sequence[str]]
) -> dict[str, list[dict[str, Any]]]:
    """Participant -> [{owner, item, event}]: each private item of another seat it
    observed, with the index of the first event that carried it."""
    texts = [_text(e) for e in trace.events]
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for owner, items in private.items():
        for item in items:
            needle = item.casefold()
            for name in names:
                if name == owner:
                    continue
                first = next((i for i, (e, t) in enumerate(zip(trace.events, texts, strict=True))
                              if needle in t and visible(e, name)), None)
                if first is not None:
                    found[name].append({"owner": owner, "item": item, "event": first})
    return found


def _text(event: TraceEvent) -> str:
    if isinstance(event, MessageDelivered):
        payload = json.dumps(event.message.payload) if event.message.payload else ""
        return f"{event.message.text or ''}\n{payload}".casefold()
    if isinstance(event, EnvEvent):
        return json.dumps(event.fields(), ensure_ascii=False).casefold()
    return ""

