"""Messages and channels.

A message is immutable. Its `recipients` are resolved when it is built (a group message
lists the group's members, a broadcast lists everyone registered with the postbox), so the
trace records exactly who could see it. `id` is assigned by the postbox when posted.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ChannelKind = Literal["dm", "group", "broadcast"]


class Channel(BaseModel):
    """Where a message goes: a direct message, a named group with a fixed member set, or
    a broadcast to every registered agent."""

    model_config = ConfigDict(frozen=True)

    kind: ChannelKind
    name: str | None = Field(default=None, description="Group name, e.g. 'meeting:m3'.")
    members: tuple[str, ...] = Field(default=(), description="Group member set, sorted.")

    @classmethod
    def dm(cls) -> Channel:
        return cls(kind="dm")

    @classmethod
    def group(cls, name: str, members: tuple[str, ...] | list[str]) -> Channel:
        return cls(kind="group", name=name, members=tuple(sorted(set(members))))

    @classmethod
    def broadcast(cls) -> Channel:
        return cls(kind="broadcast", name="all")


class Message(BaseModel):
    """One communication act. `text` is for language agents, `payload` (JSON-able, with a
    "type" key by convention) for reference protocols; either or both may be set."""

    model_config = ConfigDict(frozen=True)

    id: int = -1
    sender: str
    recipients: tuple[str, ...] = ()
    channel: Channel
    text: str | None = None
    payload: dict[str, Any] | None = None
    round: int = 0
    turn: int = 0

    def visible_to(self, agent: str) -> bool:
        """True when `agent` sent or received this message."""
        return agent == self.sender or agent in self.recipients
