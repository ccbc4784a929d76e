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
from confide.core.trace import EnvEvent, MessageDelivered, ModelCall, Trace, TraceEvent


def render_trace(trace: Trace, as_agent: str | None = None, *, show_prompts: bool = False) -> str:
    """The episode as text lines; restricted to `as_agent`'s view when given."""
    h = trace.header
    lines = [
        f"episode {h.episode_id}  benchmark={h.benchmark}  scenario={h.scenario_id}  "
        f"seed={h.seed}" + (f"  condition={h.condition}" if h.condition else ""),
        f"lineup: {', '.join(h.lineup)}",
    ]
    if as_agent is not None:
        lines.append(f"view of: {as_agent}")
    for event in trace.events:
        if as_agent is None or _visible(event, as_agent):
            lines.append(_line(event, show_prompts))
    if trace.footer is None:
        lines.append("(incomplete: no episode_end)")
    else:
        f = trace.footer
        lines.append(f"end: status={f.status}" + (f" error={f.error}" if f.error else ""))
        if as_agent is None and f.metrics:
            lines.append("metrics: " + _compact(f.metrics))
    return "\n".join(lines)


def _visible(event: TraceEvent, agent: str) -> bool:
    if isinstance(event, MessageDelivered):
        return event.message.visible_to(agent)
    if isinstance(event, EnvEvent):
        return event.visible_to is not None and agent in event.visible_to
    if isinstance(event, ModelCall):
        return event.seat == agent
    return False


def _line(event: TraceEvent, show_prompts: bool) -> str:
    if isinstance(event, MessageDelivered):
        return _message_line(event.message)
    if isinstance(event, EnvEvent):
        where = f"r{event.round} " if event.round is not None else ""
        who = f"{event.seat}: " if event.seat else ""
        return f"  [{where}{event.name}] {who}{_compact(event.data)}"
    if isinstance(event, ModelCall):
        reply = event.error or (event.completion or {}).get("text", "")
        head = f"  <model {event.model} for {event.seat} ({event.purpose})> {_clip(str(reply))}"
        if show_prompts:
            prompt = "\n".join(f"      {m['role']}: {m['content']}" for m in event.messages)
            return head + "\n" + prompt
        return head
    return f"  [{event.kind}]"


def _message_line(m: Message) -> str:
    route = {
        "dm": "dm",
        "group": f"group {m.channel.name}",
        "broadcast": "broadcast",
    }[m.channel.kind]
    body = m.text if m.text is not None else _compact(m.payload or {})
    to = ", ".join(m.recipients) or "-"
    return f"  r{m.round}.t{m.turn} {m.sender} -> {to} ({route}): {body}"


def _compact(data: dict[str, Any]) -> str:
    return _clip(json.dumps(data, sort_keys=True, default=str))


def _clip(text: str, limit: int = 300) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."
