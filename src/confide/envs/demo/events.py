"""The demo relay's trace events: one class per kind."""

from __future__ import annotations

from typing import Literal

from confide.core.trace import EnvEvent


class RoundStart(EnvEvent):
    """A round of the ring opens (seen by every seat)."""

    name: Literal["round_start"] = "round_start"


class InvalidAction(EnvEvent):
    """A seat produced no message this turn."""

    name: Literal["invalid_action"] = "invalid_action"


EVENTS: tuple[type[EnvEvent], ...] = (RoundStart, InvalidAction)
