"""The postbox: the one place where visibility is decided.

Every message goes through `Postbox.post`, which resolves its recipient set from the
channel, checks that sender and recipients are registered and active, assigns the message
id, records the delivery (through the `on_deliver` hook, which environments point at the
trace) and appends it to each recipient's inbox. Observations are built only from
`Postbox.seen_by(agent)` and the agent's own state, so an agent can never observe a
message that was not delivered to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from confide.core.message import Channel, Message
from confide.core.trusted import builder
from confide.errors import ConfideError

_message = builder(
    Message, "id", "sender", "recipients", "channel", "text", "payload", "round", "turn"
)


class RoutingError(ConfideError):
    """A message named an unknown or inactive party, or a group its sender is not in."""


class Postbox:
    """Routes messages among a fixed set of agents and keeps per-agent views."""

    def __init__(
        self,
        agents: Iterable[str],
        on_deliver: Callable[[Message], None] | None = None,
    ) -> None:
        self.agents: tuple[str, ...] = tuple(agents)
        if len(set(self.agents)) != len(self.agents):
            raise RoutingError(f"duplicate agent names in {list(self.agents)}")
        self._active = set(self.agents)
        self._seen: dict[str, list[Message]] = {a: [] for a in self.agents}
        self._log: list[Message] = []
        self._on_deliver = on_deliver

    # -- membership -------------------------------------------------------------------
    def deactivate(self, agent: str) -> None:
        """Stop delivering to `agent` (e.g. it left the conversation)."""
        self._require_known(agent, "agent")
        self._active.discard(agent)

    def is_active(self, agent: str) -> bool:
        return agent in self._active

    @property
    def active_agents(self) -> tuple[str, ...]:
        return tuple(a for a in self.agents if a in self._active)

    # -- routing ------------------------------------------------------------------------
    def resolve(self, sender: str, channel: Channel, to: Iterable[str] = ()) -> tuple[str, ...]:
        """The recipient set of a message: named recipients for a DM, the group's members
        for a group, every active agent for a broadcast; never the sender itself."""
        known = self._seen
        if sender not in known:
            self._unknown(sender, "sender")
        if channel.kind == "dm":
            names = tuple(dict.fromkeys(to))
            if not names:
                raise RoutingError(f"direct message from {sender!r} names no recipient")
            for name in names:
                if name not in known:
                    self._unknown(name, "recipient")
        elif channel.kind == "group":
            if sender not in channel.members:
                raise RoutingError(
                    f"{sender!r} is not a member of group {channel.name!r} {list(channel.members)}"
                )
            for name in channel.members:
                if name not in known:
                    self._unknown(name, "group member")
            names = channel.members
        else:
            names = self.agents
        active = self._active
        return tuple([n for n in names if n != sender and n in active])

    def post(
        self,
        sender: str,
        channel: Channel,
        *,
        to: Iterable[str] = (),
        text: str | None = None,
        payload: dict[str, Any] | None = None,
        round: int = 0,
        turn: int = 0,
    ) -> Message:
        """Deliver a message and return it with its id and resolved recipients."""
        if sender not in self._active:
            raise RoutingError(f"{sender!r} has left and cannot send")
        recipients = self.resolve(sender, channel, to)
        # every field is typed by this signature or resolved here: no validation needed
        message = _message(
            id=len(self._log),
            sender=sender,
            recipients=recipients,
            channel=channel,
            text=text,
            payload=payload,
            round=round,
            turn=turn,
        )
        self._log.append(message)
        self._seen[sender].append(message)
        for name in recipients:
            self._seen[name].append(message)
        if self._on_deliver is not None:
            self._on_deliver(message)
        return message

    # -- views --------------------------------------------------------------------------
    def seen_by(self, agent: str, since: int = 0) -> list[Message]:
        """Messages `agent` sent or received, in delivery order, from position `since` of
        its own view (pass the previous length to get only new ones)."""
        self._require_known(agent, "agent")
        return self._seen[agent][since:]

    def inbox(self, agent: str, since: int = 0) -> list[Message]:
        """Messages delivered to `agent` by others."""
        return [m for m in self.seen_by(agent, since) if m.sender != agent]

    @property
    def log(self) -> tuple[Message, ...]:
        """Every message posted (for the trace and metrics, never for observations)."""
        return tuple(self._log)

    def _require_known(self, name: str, what: str) -> None:
        if name not in self._seen:
            self._unknown(name, what)

    def _unknown(self, name: str, what: str) -> NoReturn:
        raise RoutingError(f"unknown {what} {name!r}; known agents: {list(self.agents)}")
