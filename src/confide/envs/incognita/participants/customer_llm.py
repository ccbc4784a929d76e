"""The customer simulator and the gate's field classifier, driven by a chat model
(incognita.md A.2, section 3.1).

`ModelCustomer`: its prompt is the shared behaviour block with a <memory> holding only the
opening line and the fields the gate has released, plus the card's <requests> block when
the card has requests. It writes plain text; the prompt for a task is the same in every
condition, for every evaluated agent and repetition (it depends on the card and on what
was released, nothing else).

`ModelGateClassifier`: shown the release tokens with what each stands for (never a
value) and one agent message, it names the single field the message asks for, or none.
Its answer only *selects*; the gate (`gate.DisclosureGate`) decides and records.

Decisions
- A classifier reply that stays unusable after the repair loop counts as "asks for no
  field" (the failure is in the trace as the model call itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from confide.envs.incognita import prompts
from confide.envs.incognita.actions import CustomerAction, CustomerObservation
from confide.envs.incognita.gate import field_label
from confide.envs.incognita.participants.prompting import ask_json
from confide.llm import ChatMessage, ChatModel, GenerateConfig
from confide.llm.structured import generate_in_context


def customer_system_prompt(observation: CustomerObservation) -> str:
    """The shared behaviour block with the current memory, then the requests block."""
    memory = [f"- What you opened the conversation with: {observation.opening_line}"]
    memory += [f"- {item.label.capitalize()}: {item.value}" for item in observation.memory]
    text = prompts.render("customer", memory="\n".join(memory))
    if observation.requests:
        listed = "\n".join(f"- {request}" for request in observation.requests)
        text += "\n" + prompts.render("customer_requests", requests=listed)
    return text


class ModelCustomer:
    """The customer simulator."""

    def __init__(self, name: str, model: ChatModel, config: GenerateConfig) -> None:
        self.name = name
        self._model = model
        self._config = config

    async def act(self, observation: CustomerObservation) -> CustomerAction:
        turns = [ChatMessage(role="system", content=customer_system_prompt(observation))]
        for message in observation.history:
            own = message.sender == self.name
            role: Literal["assistant", "user"] = "assistant" if own else "user"
            turns.append(ChatMessage(role=role, content=message.text or ""))
        completion = await generate_in_context(self._model, turns, config=self._config)
        if isinstance(completion, str):  # the customer's model can say no more: silence
            return CustomerAction(text="")
        return CustomerAction(text=completion.text.strip())


class _GateAnswerBase(BaseModel):
    model_config = ConfigDict(extra="forbid")


@cache
def gate_answer_model(tokens: tuple[str, ...]) -> type[BaseModel]:
    """``{"field": <one of tokens> | null}``."""
    token_type: Any = Literal[tokens]
    model: type[BaseModel] = create_model(
        "GateAnswer", __base__=_GateAnswerBase, field=(token_type | None, ...)
    )
    return model


class ModelGateClassifier:
    """Names the field an agent message asks the customer for."""

    def __init__(self, model: ChatModel, config: GenerateConfig, max_attempts: int = 3) -> None:
        self._model = model
        self._config = config
        self._max_attempts = max_attempts

    async def classify(self, text: str, tokens: Sequence[str]) -> str | None:
        listed = "\n".join(f"- {token}: {field_label(token)}" for token in tokens)
        messages = [
            ChatMessage(role="system", content=prompts.render("gate", fields=listed)),
            ChatMessage(role="user", content=text),
        ]
        schema = gate_answer_model(tuple(tokens))
        result = await ask_json(
            self._model, messages, schema, self._config, self._max_attempts
        )
        if not result.ok or result.value is None:
            return None
        field = result.value.__dict__["field"]
        return field if isinstance(field, str) else None
