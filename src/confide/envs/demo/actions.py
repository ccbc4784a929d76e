"""What a demo seat is shown and what it answers."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from confide.core.message import Message


class DemoObservation(BaseModel):
    """What a seat sees: its name, its private note, the round and its new messages."""

    seat: str
    private_note: str
    round: int
    next_seat: str
    new_messages: list[Message]


class DemoAction(BaseModel):
    """A message to the next seat; `valid` is False when the participant produced none."""

    text: str
    valid: bool = True


class Participant(Protocol):
    """A seat of the relay (what a custom `py:` or plugin participant implements)."""

    name: str

    async def act(self, observation: DemoObservation) -> DemoAction: ...
