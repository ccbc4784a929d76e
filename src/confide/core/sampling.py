"""Sampling settings: what a seat or role asks its model for, set by the experiment.

An environment builds each request's `GenerateConfig` with its own defaults (a simulator
at temperature 0, an agent at the paper's setting); the experiment's `sampling` entry for
the seat or role then overrides exactly the fields it sets, so a paper's settings
(the Incognita paper, section 5: agents at temperature 1 and high reasoning effort, simulators at
temperature 0 and no effort) are written once, in the experiment, and recorded in every
trace header. Each provider maps them to its API (`confide.llm.providers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]

SEATS = "seats"
"""The `sampling` key that applies to every evaluated seat (a seat's own entry wins)."""


class Sampling(BaseModel):
    """Decoding settings one seat or role overrides; None leaves the environment's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    reasoning_effort: ReasoningEffort | None = None

    def overrides(self) -> dict[str, Any]:
        """The fields set, as `GenerateConfig` updates."""
        return self.model_dump(exclude_none=True)


def sampling_for(
    sampling: Mapping[str, Sampling], *, seat: str | None, role: str | None, seats: set[str]
) -> Sampling | None:
    """The settings of a model call: the role's entry for a role's call; for an evaluated
    seat's call, its own entry over the `seats` entry; None when nothing is set."""
    if role is not None:
        return sampling.get(role)
    if seat is None or seat not in seats:
        return None
    shared, own = sampling.get(SEATS), sampling.get(seat)
    if shared is None or own is None:
        return own or shared
    return Sampling.model_validate({**shared.overrides(), **own.overrides()})
