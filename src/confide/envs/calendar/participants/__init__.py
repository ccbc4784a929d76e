"""CalBench participants: the reference protocols, addressed by name in lineups.

`imap` (D.1) and `sdmap` (D.2) speak typed JSON through the postbox like any other seat.
Options used: `sd_model` (agent id -> scheduling difficulty sigma, SD-MAP only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confide.core.benchmark import SeatSpec
from confide.envs.calendar.engine import CalendarParticipant
from confide.envs.calendar.participants.base import ProtocolParticipant, plan_batch
from confide.envs.calendar.participants.imap import ImapParticipant
from confide.envs.calendar.participants.sdmap import SdmapParticipant
from confide.errors import ConfideError

REFERENCE_NAMES: tuple[str, ...] = ("imap", "sdmap")


def make_reference(seat: str, name: str, options: Mapping[str, Any]) -> CalendarParticipant:
    """The reference participant `name` for `seat`."""
    if name == "imap":
        return ImapParticipant(seat)
    if name == "sdmap":
        return SdmapParticipant(seat, sd_model=options.get("sd_model"))
    raise ConfideError(
        f"calbench: unknown participant {name!r} for {seat}; reference participants: "
        f"{', '.join(REFERENCE_NAMES)}"
    )


def make_participant(seat: str, spec: SeatSpec, options: Mapping[str, Any]) -> CalendarParticipant:
    """A participant for one seat of a lineup."""
    if spec.is_model:
        raise ConfideError(
            f"calbench: {seat} asks for model {spec.raw!r}, but this build has no CalBench "
            f"LLM agent; use a reference participant ({', '.join(REFERENCE_NAMES)})"
        )
    return make_reference(seat, spec.raw, options)


__all__ = [
    "REFERENCE_NAMES",
    "ImapParticipant",
    "ProtocolParticipant",
    "SdmapParticipant",
    "make_participant",
    "make_reference",
    "plan_batch",
]
