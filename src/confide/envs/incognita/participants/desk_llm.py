"""A service desk driven by a chat model (incognita.md A.3).

Its prompt is its role block, the shared conduct block, its operating rules, and its
tools with the JSON output format (`prompting.desk_system_prompt`). Each step it answers
with ``{"tool": ..., "arguments": {...}}`` (a proposal the execution layer checks) or
``{"reply": ...}`` (its answer to the agent, which ends its turn). The tool name is a
free string: whether the desk holds the tool is decided and recorded by the execution
layer, never by the schema.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, JsonValue, model_validator

from confide.envs.incognita.actions import DeskAction, DeskObservation
from confide.envs.incognita.participants.prompting import JsonSeat, desk_system_prompt


class DeskTurn(BaseModel):
    """One desk step: a tool call or a reply, never both."""

    model_config = ConfigDict(extra="forbid")

    tool: str | None = None
    arguments: dict[str, JsonValue] | None = None
    reply: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> DeskTurn:
        if (self.tool is None) == (self.reply is None):
            raise ValueError('give either "tool" (with "arguments") or "reply", exactly one')
        if self.reply is not None and self.arguments is not None:
            raise ValueError('"arguments" belong to a tool call, not to a reply')
        return self


class ModelDesk(JsonSeat):
    """A desk whose steps come from a chat model."""

    async def act(self, observation: DeskObservation) -> DeskAction:
        result = await self._ask(
            desk_system_prompt(observation.role, observation.tools),
            observation.history,
            DeskTurn,
            reply_key="reply",
        )
        if not result.ok or result.value is None:
            return DeskAction(kind="invalid", problem=result.error)
        turn = result.value
        if turn.tool is not None:
            return DeskAction(kind="tool", tool=turn.tool, arguments=turn.arguments or {})
        return DeskAction(kind="reply", text=turn.reply)
