"""Participants of the demo relay: a scripted reference and a chat-model seat."""

from __future__ import annotations

import random
from typing import Any

from confide.core.benchmark import EpisodeContext, SeatSpec
from confide.core.custom import custom_participant
from confide.envs.demo.actions import DemoAction, DemoObservation, Participant
from confide.errors import ConfideError
from confide.llm import ChatMessage, GenerateConfig


class ScriptedRelay:
    """Reports how many messages it received and a seeded token (deterministic per seat)."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name = name
        self._rng = rng

    async def act(self, observation: DemoObservation) -> DemoAction:
        token = self._rng.randrange(10_000)
        return DemoAction(
            text=f"{self.name} r{observation.round}: got {len(observation.new_messages)} "
            f"message(s), token {token}"
        )


class ModelRelay:
    """Asks a chat model for the next line; an empty reply is an invalid turn."""

    def __init__(self, name: str, model: Any) -> None:
        self.name = name
        self._model = model

    async def act(self, observation: DemoObservation) -> DemoAction:
        heard = "\n".join(f"{m.sender}: {m.text}" for m in observation.new_messages) or "(none)"
        prompt = [
            ChatMessage(
                role="system",
                content=f"You are {self.name} in a relay game. Reply with one short line "
                f"for {observation.next_seat}.",
            ),
            ChatMessage(role="user", content=f"Round {observation.round}. You heard:\n{heard}"),
        ]
        completion = await self._model.generate(prompt, config=GenerateConfig(max_tokens=64))
        text = completion.text.strip()
        return DemoAction(text=text, valid=bool(text))


def make_participant(
    seat: str, spec: SeatSpec, ctx: EpisodeContext, rng: random.Random
) -> Participant:
    if spec.model is not None:
        return ModelRelay(seat, ctx.model_for(seat, spec.model))
    if spec.reference == "scripted":
        return ScriptedRelay(seat, rng)
    custom: Participant | None = custom_participant("demo", seat, spec, ctx)
    if custom is not None:
        return custom
    raise ConfideError(
        f"demo: unknown participant {spec.raw!r}; use 'scripted', a model spec, "
        "py:module:factory or an installed participant plugin"
    )
