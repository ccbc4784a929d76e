"""The evaluated agent driven by a chat model (incognita.md A.1).

Each turn the model sees its system prompt (participant list, neutral objective, output
format; under direct access also the service role, rules and tool list) and its own
history, and must answer with one JSON object: a directed message, the FINAL signal to
ENVIRONMENT, or (direct access only) one tool call. Replies are parsed with
`generate_structured`, which tells the model exactly what was wrong and asks again, up to
`max_attempts` calls; a turn that still yields nothing usable is an invalid turn (it uses
up one of the budgeted turns and changes nothing).

The output schema is built per condition: ``recipient`` is one of the participants the
agent may address (or ENVIRONMENT), so a misaddressed message is caught by the repair
loop. Tool names are free strings: the execution layer decides, and records, whether the
agent holds the tool it names.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, create_model, model_validator

from confide.envs.incognita.actions import AgentAction, AgentObservation
from confide.envs.incognita.conditions import TERMINAL
from confide.envs.incognita.participants.prompting import JsonSeat, agent_system_prompt


class _AgentTurnBase(BaseModel):
    """Either a message (recipient, message, message_type) or a tool call (tool, arguments)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _one_form(self) -> _AgentTurnBase:
        data = self.__dict__
        if data.get("tool") is not None:
            extra = [k for k in ("recipient", "message", "message_type") if data.get(k) is not None]
            if extra:
                raise ValueError(f"a tool call carries only tool and arguments, not {extra}")
            return self
        missing = [k for k in ("recipient", "message", "message_type") if data.get(k) is None]
        if missing:
            raise ValueError(
                f"a message needs recipient, message and message_type; missing {missing}"
            )
        final = data["message_type"] == "FINAL"
        if final != (data["recipient"] == TERMINAL):
            raise ValueError("message_type FINAL goes to ENVIRONMENT, and only FINAL does")
        return self


@cache
def agent_turn_model(recipients: tuple[str, ...], with_tools: bool) -> type[BaseModel]:
    """The JSON schema of one agent turn for this participant list."""
    recipient_type: Any = Literal[(*recipients, TERMINAL)]
    fields: dict[str, Any] = {
        "recipient": (recipient_type | None, None),
        "message": (str | None, None),
        "message_type": (Literal["MESSAGE", "FINAL"] | None, None),
    }
    if with_tools:
        fields["tool"] = (str | None, None)
        fields["arguments"] = (dict[str, JsonValue] | None, None)
    model: type[BaseModel] = create_model("AgentTurn", __base__=_AgentTurnBase, **fields)
    return model


class ModelAgent(JsonSeat):
    """An evaluated agent whose turns come from a chat model."""

    async def act(self, observation: AgentObservation) -> AgentAction:
        result = await self._ask(
            agent_system_prompt(observation.recipients, observation.tools),
            observation.history,
            agent_turn_model(observation.recipients, bool(observation.tools)),
            reply_key="message",
        )
        if not result.ok or result.value is None:
            return AgentAction(kind="invalid", problem=result.error)
        turn = result.value.__dict__
        if turn.get("tool") is not None:
            arguments = turn.get("arguments") or {}
            return AgentAction(kind="tool", tool=turn["tool"], arguments=arguments)
        if turn["message_type"] == "FINAL":
            return AgentAction(kind="final", recipient=TERMINAL, text=turn["message"])
        return AgentAction(kind="message", recipient=turn["recipient"], text=turn["message"])
