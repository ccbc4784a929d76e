"""The customer simulator and the gate's field classifier, driven by a chat model
(the Incognita paper §A.2, section 3.1).

`ModelCustomer`: its system prompt is the shared behaviour block with a <memory> holding
the opening line, plus the card's <requests> block when the card has requests; then comes
the dialogue with the agent, and each field the gate releases is added to the customer's
memory as a further <memory> block at the end of the agent message that asked for it
(section 3.1: the gate "releases one field at a time and only when the agent asks for
that field"). It writes plain text; the prompt for a task is the same in every condition,
for every evaluated agent and repetition (it depends on the card, the dialogue and what
was released when, nothing else; A.2).

Prompt order: the memory used to be rewritten inside the system prompt at every
release, which changed the very first message and so voided a provider's prompt cache
for the whole conversation. Now the system prompt is fixed for the task and the
conversation only grows: each call starts with the previous call's messages. Same facts
in the same wording ("- Label: value" lines inside <memory>), only placed where they were
released; the behaviour block says that later <memory> blocks are more of the customer's
own memory. The customer remembers after which agent message each field came (it is
asked just before it is called), since its observation lists the released fields
without their time.

`ModelGateClassifier`: shown the release tokens with what each stands for (never a
value) and one agent message, it names the single field the message asks for, or none.
Its answer only *selects*; the gate (`gate.DisclosureGate`) decides and records.

Decisions
- A classifier reply that stays unusable after the repair loop counts as "asks for no
  field" (the failure is in the trace as the model call itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from confide.envs.incognita import prompts
from confide.envs.incognita.actions import CustomerAction, CustomerObservation
from confide.envs.incognita.gate import MemoryItem, field_label
from confide.envs.incognita.prompting import ask_json
from confide.llm import ChatMessage, ChatModel, GenerateConfig
from confide.llm.structured import generate_in_context


def customer_system_prompt(observation: CustomerObservation) -> str:
    """The shared behaviour block with the opening line as memory, then the requests
    block (the same at every call of an episode)."""
    memory = f"- What you opened the conversation with: {observation.opening_line}"
    text = prompts.render("customer", memory=memory)
    if observation.requests:
        listed = "\n".join(f"- {request}" for request in observation.requests)
        text += "\n" + prompts.render("customer_requests", requests=listed)
    return text


def released_block(items: Sequence[MemoryItem]) -> str:
    """Fields the gate released, as a <memory> block."""
    lines = "\n".join(f"- {item.label.capitalize()}: {item.value}" for item in items)
    return f"<memory>\n{lines}\n</memory>"


def customer_turns(
    observation: CustomerObservation, released_after: Mapping[int, Sequence[MemoryItem]]
) -> list[ChatMessage]:
    """The customer's conversation: the fixed system prompt, then the dialogue, with the
    fields released by an agent message (`released_after`: message id -> fields) at the
    end of that message's turn."""
    turns = [ChatMessage(role="system", content=customer_system_prompt(observation))]
    for message in observation.history:
        own = message.sender == observation.name
        role: Literal["assistant", "user"] = "assistant" if own else "user"
        text = message.text or ""
        if message.id in released_after:
            text += "\n\n" + released_block(released_after[message.id])
        turns.append(ChatMessage(role=role, content=text))
    return turns


class ModelCustomer:
    """The customer simulator."""

    def __init__(self, name: str, model: ChatModel, config: GenerateConfig) -> None:
        self.name = name
        self._model = model
        self._config = config
        self._released_after: dict[int, list[MemoryItem]] = {}
        self._known = 0

    def remember(self, observation: CustomerObservation) -> None:
        """Note the fields released since the last call at the agent message that asked
        (the last one in the history: the gate decides on it just before this call)."""
        new = observation.memory[self._known :]
        asked = [m.id for m in observation.history if m.sender != self.name]
        if new and asked:
            self._released_after.setdefault(asked[-1], []).extend(new)
            self._known = len(observation.memory)

    async def act(self, observation: CustomerObservation) -> CustomerAction:
        self.remember(observation)
        turns = customer_turns(observation, self._released_after)
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
