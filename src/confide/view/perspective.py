"""Who saw what: per participant, the private items of others that reached it, and (for
Incognita's desks and customer) the desk data only it held.

Exposure is read from the events each participant observed (`core.trace_view.visible`):
the first delivered message or environment record whose text contains another seat's
private item (the benchmark's `private_markers`) is where that item reached it. Model calls
are left out: their prompts repeat what was delivered, and the marker should point at the
delivery.

Incognita (incognita.md 3.1-3.2): every desk sees only its own DMs with the agent and the
tool calls it executed on its records; the customer alone sees its disclosure gate. The
setup record names each desk's role and the tools it owns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

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


def desk_data(trace: Trace, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Participant -> its Incognita desk data: role, owned tools, the tool calls it ran
    (arguments, outcome, result) and, for the customer, its gate releases; empty for other
    benchmarks."""
    if trace.header.benchmark != "incognita":
        return {}
    from confide.envs.incognita import events as ev
    from confide.envs.incognita.conditions import AGENT, CUSTOMER, DeskRole, tools_for_role

    data: dict[str, dict[str, Any]] = {}
    setup = next(iter(trace.of(ev.EpisodeSetup)), None)

    def entry(name: str) -> dict[str, Any]:
        return data.setdefault(name, {"role": "", "tools": [], "calls": [], "releases": []})

    entry(CUSTOMER)["role"] = "customer"
    if setup is not None:
        for desk, role in setup.data.desk_roles.items():
            entry(desk).update(role=role, tools=list(tools_for_role(cast(DeskRole, role))))
        entry(AGENT).update(role="agent", tools=list(setup.data.agent_tools))
    for i, event in enumerate(trace.events):
        if isinstance(event, ev.ToolExecuted | ev.ToolRejected) and event.seat:
            call = entry(event.seat)
            outcome = ("ok" if event.data.ok else f"error {event.data.error_code}: "
                       f"{event.data.error}") if isinstance(event, ev.ToolExecuted) \
                else f"rejected ({event.data.reason}): {event.data.message}"
            call["calls"].append({
                "event": i, "tool": event.data.tool, "arguments": event.data.arguments,
                "outcome": outcome,
                "result": event.data.result if isinstance(event, ev.ToolExecuted) else None,
            })
        elif isinstance(event, ev.GateRelease) and event.seat:
            entry(event.seat)["releases"].append(
                {"event": i, "field": event.data.field, "message_id": event.data.message_id})
    return {name: value for name, value in data.items() if name in names}

