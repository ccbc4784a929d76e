"""Human-readable rendering of a trace, whole or as one agent saw it.

`--as AGENT` shows only what that agent could observe: messages it sent or received,
environment events whose `visible_to` includes it, and its own model calls. This is the
same visibility rule the postbox enforces, so the view is a faithful replay of the
agent's side of the episode.
"""

from __future__ import annotations

import json
from typing import Any

from confide.core.message import Message
from confide.core.trace import (
    EnvEvent,
    MessageDelivered,
    ModelCall,
    ScoringStart,
    Trace,
    TraceEvent,
)
from confide.errors import ConfideError

CLIP = 300
"""Payload characters shown per line unless `full` is asked for."""


def participants(trace: Trace) -> list[str]:
    """Every name that sends, receives or observes something in the trace, in order of
    first appearance (read from the delivery records, never guessed from the lineup)."""
    names: dict[str, None] = {}
    for event in trace.events:
        if isinstance(event, MessageDelivered):
            names.update(dict.fromkeys((event.message.sender, *event.message.recipients)))
        elif isinstance(event, EnvEvent):
            names.update(dict.fromkeys(event.visible_to or ()))
        elif isinstance(event, ModelCall) and event.seat is not None:
            names[event.seat] = None
    return list(names)


def resolve_participant(trace: Trace, name: str) -> str:
    """`name` as spelled in the trace: an exact match, else the one case-insensitive match;
    otherwise an error listing the valid names."""
    names = participants(trace)
    if name in names:
        return name
    folded = [n for n in names if n.casefold() == name.strip().casefold()]
    if len(folded) == 1:
        return folded[0]
    raise ConfideError(
        f"{trace.path}: no participant {name!r} in this episode; valid names: "
        + ", ".join(repr(n) for n in names)
    )


def render_trace(
    trace: Trace,
    as_agent: str | None = None,
    *,
    show_prompts: bool = False,
    full: bool = False,
) -> str:
    """The episode as text lines; restricted to `as_agent`'s view when given (the name is
    resolved with `resolve_participant`). `full` prints payloads uncut."""
    if as_agent is not None:
        as_agent = resolve_participant(trace, as_agent)
    limit = None if full else CLIP
    h = trace.header
    lines = [
        f"episode {h.episode_id}  benchmark={h.benchmark}  scenario={h.scenario_id}  "
        f"seed={h.seed}" + (f"  condition={h.condition}" if h.condition else ""),
        f"lineup: {', '.join(h.lineup)}",
    ]
    if as_agent is not None:
        lines.append(f"view of: {as_agent}")
    for event in trace.events:
        if as_agent is None or visible(event, as_agent):
            lines.append(_line(event, show_prompts, limit))
    if trace.footer is None:
        lines.append("(incomplete: no episode_end)")
    else:
        f = trace.footer
        lines.append(f"end: status={f.status}" + (f" error={f.error}" if f.error else ""))
        if as_agent is None and f.metrics:
            lines.append("metrics: " + _compact(f.metrics, limit))
    return "\n".join(lines)


def visible(event: TraceEvent, agent: str) -> bool:
    """Whether `agent` observed `event` (the postbox's delivery rule)."""
    if isinstance(event, MessageDelivered):
        return event.message.visible_to(agent)
    if isinstance(event, EnvEvent):
        return event.visible_to is not None and agent in event.visible_to
    if isinstance(event, ModelCall):
        return event.seat == agent
    return False


def _line(event: TraceEvent, show_prompts: bool, limit: int | None) -> str:
    if isinstance(event, MessageDelivered):
        return _message_line(event.message, limit)
    if isinstance(event, EnvEvent):
        where = f"r{event.round} " if event.round is not None else ""
        who = f"{event.seat}: " if event.seat else ""
        return f"  [{where}{event.name}] {who}{_compact(event.fields(), limit)}"
    if isinstance(event, ModelCall):
        reply = event.error or (event.completion or {}).get("text", "")
        shown = _clip(str(reply), limit)
        head = f"  <model {event.model} for {event.seat} ({event.purpose})> {shown}"
        if show_prompts:
            prompt = "\n".join(f"      {m['role']}: {m['content']}" for m in event.messages)
            return head + "\n" + prompt
        return head
    if isinstance(event, ScoringStart):
        return f"  [scoring] roles: {_compact(event.roles, limit)}"
    return f"  [{event.kind}]"


def _message_line(m: Message, limit: int | None) -> str:
    route = {
        "dm": "dm",
        "group": f"group {m.channel.name}",
        "broadcast": "broadcast",
    }[m.channel.kind]
    body = m.text if m.text is not None else _compact(m.payload or {}, limit)
    to = ", ".join(m.recipients) or "-"
    return f"  r{m.round}.t{m.turn} {m.sender} -> {to} ({route}): {body}"


def _compact(data: dict[str, Any], limit: int | None) -> str:
    return _clip(json.dumps(data, sort_keys=True, default=str), limit)


def _clip(text: str, limit: int | None) -> str:
    """One line cut to `limit` characters; None keeps it whole (continuation lines
    indented under the event)."""
    if limit is None:
        return text.replace("\n", "\n      ")
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."
