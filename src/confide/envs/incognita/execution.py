"""The deterministic execution layer between participants and the canonical database
(the Incognita paper, section 3.3).

A participant that decides to act *proposes* a tool call. The layer checks that the
proposer holds the tool in the current condition and that the arguments are admissible
(they fit the tool's argument schema), then executes the accepted call on the episode's
world. Writes are irreversible: nothing here restores an earlier state. Each step is a
trace event, visible only to the proposer:

- ``tool_proposed``  {call_id, proposer, tool, arguments}
- ``tool_rejected``  {call_id, proposer, tool, arguments, reason, message} with reason
  ``unknown_tool``, ``not_owner`` or ``inadmissible_arguments``; the call is not run.
- ``tool_accepted``  {call_id, proposer, tool, kind, arguments} (the admitted arguments)
- ``tool_executed``  {call_id, proposer, tool, kind, arguments, ok, error_code, error,
  result, state_hash} -- ``ok`` False when the tool refused (a precondition failed; the
  world is unchanged), ``state_hash`` is the world hash after a write, else null.

Decisions
- A refusal by the tool itself (say, cancelling a delivered order) is an *executed* call
  with ``ok`` False, not a rejection: the holder did act, and the database said no.
  Rejections are only for calls the proposer had no right to make or could not express.
- ``call_id`` counts every proposal of the episode from 0, so the events of one call can
  be joined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from confide.core.trace import TraceRecorder
from confide.envs.incognita import events as ev
from confide.envs.incognita.events import RejectionReason
from confide.envs.incognita.tools import (
    SERVICE_TOOLS,
    ToolError,
    ToolKind,
    ToolSpec,
    execute,
    result_text,
)
from confide.envs.incognita.world import World

ToolEvent = ev.ToolProposed | ev.ToolRejected | ev.ToolAccepted | ev.ToolExecuted


class ToolOutcome(BaseModel):
    """What became of one proposal, as its proposer is told."""

    model_config = ConfigDict(frozen=True)

    call_id: int
    proposer: str
    tool: str
    arguments: dict[str, JsonValue]
    status: Literal["rejected", "ok", "error"]
    reason: RejectionReason | None = None
    error_code: str | None = None
    result: JsonValue = None
    text: str
    """The outcome as the proposer reads it: JSON of the result, or ``Error: ...``."""

    @property
    def executed(self) -> bool:
        return self.status != "rejected"


class ExecutionLayer:
    """Checks ownership and admissibility, executes, and records every step."""

    def __init__(
        self,
        world: World,
        owners: Mapping[str, str],
        trace: TraceRecorder,
        tools: Mapping[str, ToolSpec] = SERVICE_TOOLS,
    ) -> None:
        self.world = world
        self._owners = dict(owners)
        self._trace = trace
        self._tools = tools
        self._next_id = 0

    def propose(
        self, proposer: str, tool: str, arguments: Any, *, turn: int | None = None
    ) -> ToolOutcome:
        """Decide on and (if accepted) execute one proposed call."""
        call_id = self._next_id
        self._next_id += 1
        raw: dict[str, JsonValue] = dict(arguments) if isinstance(arguments, Mapping) else {}
        call = ev.ToolCallData(call_id=call_id, proposer=proposer, tool=tool, arguments=raw)
        self._emit(ev.ToolProposed(data=call), turn)
        spec = self._tools.get(tool)
        if spec is None:
            known = ", ".join(sorted(self._tools))
            return self._reject(
                call, turn, "unknown_tool", f"there is no tool named {tool!r} ({known})"
            )
        if self._owners.get(tool) != proposer:
            return self._reject(call, turn, "not_owner", f"you do not hold the tool {tool!r}")
        try:
            admitted = spec.admit(arguments)
        except ToolError as error:
            return self._reject(call, turn, "inadmissible_arguments", error.message)
        accepted = ev.ToolAcceptedData(
            call_id=call_id, proposer=proposer, tool=tool, arguments=admitted, kind=str(spec.kind)
        )
        self._emit(ev.ToolAccepted(data=accepted), turn)
        outcome = execute(self.world, tool, admitted, self._tools)
        failed = isinstance(outcome, ToolError)
        state_hash = self.world.state_hash() if spec.kind is ToolKind.WRITE else None
        result: JsonValue = None if isinstance(outcome, ToolError) else outcome
        self._emit(ev.ToolExecuted(data=ev.ToolExecutedData(
            **dict(accepted),
            ok=not failed,
            error_code=outcome.code if isinstance(outcome, ToolError) else None,
            error=outcome.message if isinstance(outcome, ToolError) else None,
            result=result,
            state_hash=state_hash,
        )), turn)
        return ToolOutcome(
            call_id=call_id,
            proposer=proposer,
            tool=tool,
            arguments=admitted,
            status="error" if failed else "ok",
            error_code=outcome.code if isinstance(outcome, ToolError) else None,
            result=result,
            text=result_text(outcome),
        )

    def _reject(
        self, call: ev.ToolCallData, turn: int | None, reason: RejectionReason, message: str
    ) -> ToolOutcome:
        data = ev.ToolRejectedData(**dict(call), reason=reason, message=message)
        self._emit(ev.ToolRejected(data=data), turn)
        return ToolOutcome(
            call_id=call.call_id,
            proposer=call.proposer,
            tool=call.tool,
            arguments=call.arguments,
            status="rejected",
            reason=reason,
            text=f"Rejected: {message}",
        )

    def _emit(self, event: ToolEvent, turn: int | None) -> None:
        """Record `event`, seen only by the proposer."""
        proposer = event.data.proposer
        event.seat, event.round, event.visible_to = proposer, turn, [proposer]
        self._trace.emit(event)
