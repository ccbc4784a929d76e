"""The participant contract shared by every seat: reference protocols, scripted agents,
LLM agents, simulated customers and desks."""

from __future__ import annotations

from typing import Protocol, TypeVar

ObsT = TypeVar("ObsT", contravariant=True)
ActT = TypeVar("ActT", covariant=True)


class Participant(Protocol[ObsT, ActT]):
    """Anything that maps an observation to an action. Environments define the pydantic
    observation and action types; the participant never sees anything else."""

    name: str

    async def act(self, observation: ObsT) -> ActT:
        """Choose the next action from what this participant was shown."""
        ...
