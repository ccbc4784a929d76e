"""Shared rendering for the language-model participants: system prompts assembled from
the prompt files, tool catalogues, a participant's own history as chat turns, and
`JsonSeat`, the base of the model agent (one JSON step or tool call per call).

A history is rendered from the observation alone (no hidden conversation state), so the
prompt of every call is a pure function of what the participant was shown. A participant's
history only grows and its system prompt is fixed (A.1, A.3), so each request starts with
the previous one's messages, a prefix a provider's prompt cache serves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel

from confide.envs.incognita import prompts
from confide.envs.incognita.actions import HistoryItem
from confide.envs.incognita.conditions import SERVICE_ROLE, TERMINAL, DeskRole
from confide.envs.incognita.tools import SERVICE_TOOLS
from confide.llm import (
    ChatMessage,
    ChatModel,
    GenerateConfig,
    StructuredResult,
    generate_structured,
)
from confide.llm.types import ToolCall, ToolSpec

T = TypeVar("T", bound=BaseModel)


@cache
def response_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a reply model (computed once per model class)."""
    return model.model_json_schema()


async def ask_json(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    schema: type[T],
    config: GenerateConfig,
    max_attempts: int,
) -> StructuredResult[T]:
    """`generate_structured` with the reply schema attached to the request."""
    config = config.model_copy(update={"response_schema": response_schema(schema)})
    return await generate_structured(
        model, messages, schema, config=config, max_attempts=max_attempts
    )


@cache
def tool_specs(names: tuple[str, ...]) -> tuple[ToolSpec, ...]:
    """The tools `names` as sent with a request for native function calling."""
    return tuple(
        ToolSpec(name=name, description=SERVICE_TOOLS[name].description,
                 parameters=SERVICE_TOOLS[name].parameters_schema())
        for name in names
    )


@cache
def agent_system_prompt(recipients: tuple[str, ...], tools: tuple[str, ...]) -> str:
    """The evaluated agent's prompt (the Incognita paper §A.1): participant list, neutral
    objective, output format; in direct access also the service role and rules."""
    intro = prompts.load("agent_intro")
    if tools:
        return "\n".join(
            [
                intro,
                prompts.load("service_role"),
                prompts.load("service_rules"),
                prompts.load("agent_direct"),
            ]
        )
    listed = ", ".join(recipients)
    choices = " | ".join(recipients)
    return "\n".join([intro, prompts.render("agent_messaging", recipients=listed, choices=choices)])


@cache
def desk_system_prompt(role: DeskRole) -> str:
    """A desk's prompt (A.3): its role block, the shared conduct block, its operating
    rules (none for identity lookup), then how its turn works. Its tools go with each
    request as function definitions (`tool_specs`), never in this text."""
    if role == SERVICE_ROLE:
        role_block, rules = prompts.load("service_role"), prompts.load("service_rules")
    else:
        role_block = prompts.load(f"role_{role}")
        rules = prompts.load(f"rules_{role}") if role != "identity_lookup" else ""
    parts = [role_block, prompts.load("conduct"), rules, prompts.load("desk_format")]
    return "\n".join(part for part in parts if part)


def message_turn(sender: str, text: str | None, payload: object) -> str:
    """A received message as one user turn: who wrote it, then what it says."""
    body = text if text else json.dumps(payload)
    return f"{sender}: {body}"


def render_history(
    history: Sequence[HistoryItem], me: str, *, reply_key: str | None, native_tools: bool = False
) -> list[ChatMessage]:
    """`history` as chat turns for participant `me`. Its own messages become assistant
    turns in its output format (`reply_key` "message": the agent's JSON; None: the plain
    text a desk writes), its tool calls assistant turns followed by a turn with the outcome (with
    `native_tools`, a function call and its "tool" result turn; otherwise its JSON and a
    user turn), everything else user turns."""
    turns: list[ChatMessage] = []
    for item in history:
        if item.tool is not None and native_tools:
            made = ToolCall(id=f"call-{item.tool.call_id}", name=item.tool.tool,
                            arguments=json.dumps(item.tool.arguments))
            turns.append(ChatMessage(role="assistant", content="", tool_calls=(made,)))
            turns.append(ChatMessage(role="tool", tool_call_id=made.id, content=item.tool.text))
        elif item.tool is not None:
            call = {"tool": item.tool.tool, "arguments": item.tool.arguments}
            turns.append(ChatMessage(role="assistant", content=json.dumps(call)))
            turns.append(ChatMessage(role="user", content=f"Result of {item.tool.tool}: "
                                                          f"{item.tool.text}"))
        elif item.message is not None:
            message = item.message
            if message.sender == me:
                turns.append(ChatMessage(role="assistant", content=_own(message.recipients,
                                                                        message.text,
                                                                        reply_key)))
            else:
                turns.append(ChatMessage(role="user", content=message_turn(
                    message.sender, message.text, message.payload)))
    return turns


def _own(recipients: Sequence[str], text: str | None, reply_key: str | None) -> str:
    if reply_key is None:
        return text or ""
    recipient = recipients[0] if recipients else TERMINAL
    return json.dumps({"recipient": recipient, "message": text or "", "message_type": "MESSAGE"})


class JsonSeat:
    """A participant whose steps come from a chat model answering in one JSON object:
    its name, model, generation settings and repair budget, and the one call it makes."""

    def __init__(
        self, name: str, model: ChatModel, config: GenerateConfig, max_attempts: int = 3
    ) -> None:
        self.name = name
        self._model = model
        self._config = config
        self._max_attempts = max_attempts

    async def _ask(
        self,
        system: str,
        history: Sequence[HistoryItem],
        schema: type[T],
        *,
        reply_key: str,
        tools: tuple[ToolSpec, ...] = (),
    ) -> StructuredResult[T]:
        """Ask for one step: the system prompt, then `history` as this seat's chat turns;
        with `tools`, a native tool call is an answer too."""
        messages = [
            ChatMessage(role="system", content=system),
            *render_history(history, self.name, reply_key=reply_key, native_tools=bool(tools)),
        ]
        config = self._config.model_copy(update={"tools": tools}) if tools else self._config
        return await ask_json(self._model, messages, schema, config, self._max_attempts)
