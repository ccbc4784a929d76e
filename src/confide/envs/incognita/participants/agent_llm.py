"""The evaluated agent driven by a chat model (the Incognita paper §A.1).

Each turn the model sees its system prompt (participant list, neutral objective, output
format; under direct access also the service role and rules) and its own history, and
must answer with one JSON object -- a directed message or the FINAL signal to
ENVIRONMENT -- or, under direct access, with exactly one native tool call and no text
alongside it (section 3.3, A.1): the tools it holds go with the request as function
definitions (`GenerateConfig.tools`), its earlier calls and their results come back as
function-call and tool-result turns, and an endpoint without function calling gets the
model layer's text fallback, recorded in the trace (`Completion.tool_mode`). Replies are
checked by `generate_structured`, which tells the model exactly what was wrong (a bad
message, two calls, text beside a call, arguments that are no JSON object) and asks
again, up to `max_attempts` calls; a turn that still yields nothing usable is an invalid
turn (it uses up one of the budgeted turns and changes nothing).

The output schema is built per condition: ``recipient`` is one of the participants the
agent may address (or ENVIRONMENT), so a misaddressed message is caught by the repair
loop. A called tool's name is not checked here: the execution layer decides, and
records, whether the agent holds the tool it names.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model, model_validator

from confide.envs.incognita.actions import AgentAction, AgentObservation
from confide.envs.incognita.conditions import TERMINAL
from confide.envs.incognita.prompting import (
    JsonSeat,
    agent_system_prompt,
    tool_specs,
)
from confide.llm.structured import call_arguments


class _AgentTurnBase(BaseModel):
    """A directed message: recipient, message and message_type."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _final_to_environment(self) -> _AgentTurnBase:
        data = self.__dict__
        if (data["message_type"] == "FINAL") != (data["recipient"] == TERMINAL):
            raise ValueError("message_type FINAL goes to ENVIRONMENT, and only FINAL does")
        return self


@cache
def agent_turn_model(recipients: tuple[str, ...]) -> type[BaseModel]:
    """The JSON schema of one agent message for this participant list."""
    recipient_type: Any = Literal[(*recipients, TERMINAL)]
    fields: dict[str, Any] = {
        "recipient": (recipient_type, ...),
        "message": (str, ...),
        "message_type": (Literal["MESSAGE", "FINAL"], ...),
    }
    model: type[BaseModel] = create_model("AgentTurn", __base__=_AgentTurnBase, **fields)
    return model


class ModelAgent(JsonSeat):
    """An evaluated agent whose turns come from a chat model."""

    async def act(self, observation: AgentObservation) -> AgentAction:
        result = await self._ask(
            agent_system_prompt(observation.recipients, observation.tools),
            observation.history,
            agent_turn_model(observation.recipients),
            reply_key="message",
            tools=tool_specs(observation.tools),
        )
        if not result.ok:
            return AgentAction(kind="invalid", problem=result.error)
        if result.tool_call is not None:
            arguments = call_arguments(result.tool_call)
            assert isinstance(arguments, dict)  # generate_structured accepted the call
            return AgentAction(kind="tool", tool=result.tool_call.name, arguments=arguments)
        assert result.value is not None
        turn = result.value.__dict__
        if turn["message_type"] == "FINAL":
            return AgentAction(kind="final", recipient=TERMINAL, text=turn["message"])
        return AgentAction(kind="message", recipient=turn["recipient"], text=turn["message"])
