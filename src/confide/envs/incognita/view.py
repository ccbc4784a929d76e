"""Incognita in `confide view` (core/viewing.py).

Leak events are the disclosure-gate releases (the Incognita paper §4.2), each pointing at the
message whose request the gate answered; an episode's leak count is its `gate_releases`
column. Each desk, the agent and the customer get a panel of what only they held
(the Incognita paper §3.1-3.2): a desk sees only its own DMs with the agent and the tool calls it
executed on its records, and the customer alone sees its disclosure gate; the setup record
names each desk's role and the tools it owns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from confide.core.trace import Trace
from confide.core.viewing import LeakMarker, ViewHooks, counted, delivery_index
from confide.envs.incognita import events as ev
from confide.envs.incognita.conditions import AGENT, CUSTOMER, DeskRole, tools_for_role
from confide.envs.incognita.report_sections import SECTIONS


def leak_markers(trace: Trace) -> list[LeakMarker]:
    """One marker per gate release whose asking message was delivered."""
    index = delivery_index(trace)
    return [
        LeakMarker(index[e.data.message_id], "gate_release", "gate_releases",
                   f"{e.seat} released {e.data.field} (asked in message {e.data.message_id})")
        for e in trace.of(ev.GateRelease)
        if e.data.message_id in index
    ]


def desk_panels(trace: Trace, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Participant -> its desk data: role, owned tools, the tool calls it ran (arguments,
    outcome, result) and, for the customer, its gate releases."""
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


VIEW = ViewHooks(leaks=counted("gate_releases", leak_markers), desk_panels=desk_panels,
                 sections=SECTIONS)
