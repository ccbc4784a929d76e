"""The native arm's user simulator (the Incognita paper, section 3.2 "Native tau-bench";
`confide.envs.incognita.native`): the customer as tau-bench simulates it, holding the whole
task instruction, speaking first, and ending the conversation with the stop token.

`ModelUser`: its system prompt is ``prompts/native_user.txt`` with the instruction (the
card's opening line, every customer field and every request, `instruction_text`); its
conversation starts with tau-bench's greeting from the agent's side (`native.GREETING`),
then the dialogue, the agent's messages as user turns and its own as assistant turns. It
writes plain text, and a reply holding ``###STOP###`` ends the episode. The prompt for a
task is the same for every evaluated agent and repetition.

`ScriptedUser`: the LLM-free user for the reference agent and the environment's mocks. It
opens with the card's opening line, then answers as `ScriptedCustomer` does from the
whole instruction (the episode hands it every field as memory and says which one a
message asks for, `native.answer`), and says ``###STOP###`` when the agent sends a typed
``inform`` after every write the card wants has been confirmed and every request raised:
the scripted reading of tau-bench's "the instruction goal is satisfied".
"""

from __future__ import annotations

from typing import Any, Literal

from confide.envs.incognita import prompts
from confide.envs.incognita.actions import CustomerAction, CustomerObservation, payload_type
from confide.envs.incognita.native import GREETING, STOP
from confide.envs.incognita.participants.scripted import ScriptedCustomer
from confide.envs.incognita.scenario import TaskCard
from confide.llm import ChatMessage, ChatModel, GenerateConfig
from confide.llm.structured import generate_in_context

OPENING = "You open the conversation with: "
"""How the instruction states the first message (the mocks read the opening line here)."""


def instruction_text(observation: CustomerObservation) -> str:
    """The instruction the native user holds: the opening line, what it knows, and what it
    also wants to ask (`observation.memory` holds every field in the native arm)."""
    lines = [f'{OPENING}"{observation.opening_line}"']
    if observation.memory:
        lines.append("What you know, to be told only when it is needed:")
        lines += [f"- {item.label.capitalize()}: {item.value}" for item in observation.memory]
    if observation.requests:
        lines.append("You also want to ask the agent:")
        lines += [f"- {request}" for request in observation.requests]
    return "\n".join(lines)


def user_turns(observation: CustomerObservation) -> list[ChatMessage]:
    """The fixed system prompt, the greeting, then the dialogue."""
    system = prompts.render("native_user", instruction=instruction_text(observation))
    turns = [ChatMessage(role="system", content=system),
             ChatMessage(role="user", content=GREETING)]
    for message in observation.history:
        role: Literal["assistant", "user"] = (
            "assistant" if message.sender == observation.name else "user"
        )
        turns.append(ChatMessage(role=role, content=message.text or ""))
    return turns


class ModelUser:
    """tau-bench's user simulator driven by a chat model."""

    def __init__(self, name: str, model: ChatModel, config: GenerateConfig) -> None:
        self.name = name
        self._model = model
        self._config = config

    async def act(self, observation: CustomerObservation) -> CustomerAction:
        completion = await generate_in_context(
            self._model, user_turns(observation), config=self._config
        )
        if isinstance(completion, str):  # the user's model can say no more: silence
            return CustomerAction(text="")
        return CustomerAction(text=completion.text.strip())


class ScriptedUser(ScriptedCustomer):
    """The LLM-free native user (see the module docstring)."""

    def __init__(self, name: str, card: TaskCard) -> None:
        super().__init__(name, card)
        self._opening = card.opening_line

    async def act(self, observation: CustomerObservation) -> CustomerAction:
        if not observation.history:
            return CustomerAction(text=self._opening, payload={"type": "customer_reply"})
        if self._satisfied(observation):
            return CustomerAction(text=STOP, payload={"type": "customer_reply", "stop": True})
        return await super().act(observation)

    def _satisfied(self, observation: CustomerObservation) -> bool:
        last = observation.history[-1]
        if last.sender == self.name or payload_type(last) != "inform":
            return False
        approved: list[tuple[Any, Any]] = [
            (m.payload.get("tool"), m.payload.get("arguments"))
            for m in observation.history
            if m.sender == self.name and m.payload is not None and m.payload.get("approved")
        ]
        return self._raised == len(self._requests) and all(
            wanted in approved for wanted in self._wanted
        )
