"""The model-free trajectory reader: the three coordination processes of one trial.

Incognita (the Incognita paper, sections 4.1-4.2). Everything here is read from structured trace
events, never from message text:

- customer facts: ``gate_request`` / ``gate_release`` events of the disclosure gate (a fact
  is acquired exactly when its release token was released);
- service facts and actions: the execution layer's ``tool_proposed`` and ``tool_executed``
  events (proposer, tool, admitted arguments, whether the database accepted it);
- contact: the postbox's deliveries (who the evaluated agent sent messages to).

Per trial, each process is the fraction of its required items the trajectory satisfies,
and a process the condition does not contain is ``None`` (absent), never zero:

- role identification (social only): for each role assignment of the reference (a tool
  and the desk role holding it), whether that holder executed the tool at all; and the
  weaker ``holder_contacted``, whether the agent sent the holder any message;
- information acquisition (every condition): for each observable information item,
  whether it was acquired -- a customer field by its gate release, a service fact by its
  designated reference read executed with the reference arguments;
- execution (direct) / assignment (indirect, social): for each counted reference call,
  whether the expected executor executed it with the reference arguments.

Decisions where the paper is silent:

- "accepted with the reference arguments" is read as a ``tool_executed`` event with
  ``ok`` true: the read was accepted and returned its records (a read the database refused
  returned nothing to acquire).
- Arguments are compared after normalisation: free-text arguments are ignored; the
  identity-lookup arguments (email, names) ignore case and surrounding space, as the tools
  do; item lists compare as multisets of (item, replacement) pairs, since the tools act
  on them as multisets.
- The source of a missing fact is *approached* when the agent asked the gate for that
  field (a ``gate_request`` naming it, whatever the outcome), or, for a service fact, when
  it contacted the read's holder: a message to the holding desk, or in direct access a
  proposal of the read's tool with any arguments.
- An action is *attempted* when any participant proposed a write tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, JsonValue

from confide.core.trace import MessageDelivered, TraceEvent
from confide.envs.incognita import events as ev
from confide.envs.incognita.conditions import AGENT, INDIRECT_DESK
from confide.envs.incognita.reference import (
    AGENT_ROLE,
    SERVICE_ROLE,
    InformationItem,
    ReferenceCall,
    ReferenceDataError,
    TaskReference,
)
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolKind

FREE_TEXT_ARGS = frozenset({"summary"})
CASELESS_ARGS = frozenset({"email", "first_name", "last_name"})


class Execution(BaseModel):
    """One executed tool call, as the execution layer recorded it."""

    model_config = ConfigDict(frozen=True)

    proposer: str
    tool: str
    arguments: dict[str, JsonValue]
    ok: bool


class TrialEvents(BaseModel):
    """The structured events of one trial that the reader uses, and nothing else."""

    model_config = ConfigDict(frozen=True)

    condition: str
    holders: dict[str, str]
    """Executor role -> participant name in this trial (``agent`` -> the agent, ``service``
    -> the indirect desk, a desk role -> the social desk holding it)."""
    released: frozenset[str]
    requested: frozenset[str]
    """Release tokens the agent asked the gate for (any outcome)."""
    proposed: tuple[tuple[str, str], ...]
    """(proposer, tool) of every proposal."""
    executed: tuple[Execution, ...]
    contacted: frozenset[str]
    """Participants the agent sent at least one message to."""


def holders_for(condition: str, desk_roles: Mapping[str, str] | None = None) -> dict[str, str]:
    """Executor role -> participant name. `desk_roles` (desk name -> role, as the trial's
    setup event records it) is required under social access, where the names are shuffled
    per trial; without it the indirect desk is the environment's fixed intermediary."""
    if condition == "direct":
        return {AGENT_ROLE: AGENT}
    if desk_roles:
        return {role: name for name, role in desk_roles.items()}
    if condition == "indirect":
        return {SERVICE_ROLE: INDIRECT_DESK}
    if condition == "social":
        raise ReferenceDataError("the social condition needs the trial's desk-to-role map")
    raise ReferenceDataError(f"unknown condition {condition!r}")


def trial_events(
    events: Sequence[TraceEvent], condition: str, desk_roles: Mapping[str, str] | None = None
) -> TrialEvents:
    """Collect what the reader needs from one trial's trace events."""
    released: set[str] = set()
    requested: set[str] = set()
    proposed: list[tuple[str, str]] = []
    executed: list[Execution] = []
    contacted: set[str] = set()
    for event in events:
        if isinstance(event, MessageDelivered):
            if event.message.sender == AGENT:
                contacted.update(event.message.recipients)
        elif isinstance(event, ev.GateRelease):
            released.add(event.data.field)
        elif isinstance(event, ev.GateRequest):
            if event.data.field is not None:
                requested.add(event.data.field)
        elif isinstance(event, ev.ToolProposed):
            proposed.append((event.data.proposer, event.data.tool))
        elif isinstance(event, ev.ToolExecuted):
            data = event.data
            executed.append(Execution(
                proposer=data.proposer, tool=data.tool, arguments=data.arguments, ok=data.ok
            ))
    return TrialEvents(
        condition=condition,
        holders=holders_for(condition, desk_roles),
        released=frozenset(released),
        requested=frozenset(requested),
        proposed=tuple(proposed),
        executed=tuple(executed),
        contacted=frozenset(contacted),
    )


# ----- argument comparison ----------------------------------------------------------------


def _normal(tool: str, arguments: Mapping[str, JsonValue]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        if name in FREE_TEXT_ARGS:
            continue
        if name in CASELESS_ARGS and isinstance(value, str):
            out[name] = value.strip().casefold()
        else:
            out[name] = value
    items = out.pop("item_ids", None)
    new_items = out.pop("new_item_ids", None)
    if isinstance(items, list):
        if isinstance(new_items, list) and len(new_items) == len(items):
            out["item_pairs"] = sorted(zip(map(str, items), map(str, new_items), strict=True))
        else:
            out["item_ids"] = sorted(map(str, items))
            if new_items is not None:
                out["new_item_ids"] = new_items
    elif new_items is not None:
        out["new_item_ids"] = new_items
    return {"tool": tool, **out}


def same_call(tool: str, arguments: Mapping[str, JsonValue], call: ReferenceCall) -> bool:
    """True when (`tool`, `arguments`) is `call` with the reference arguments."""
    return tool == call.tool and _normal(tool, arguments) == _normal(call.tool, call.arguments)


# ----- the processes ------------------------------------------------------------------------


class TrialReading(BaseModel):
    """The reader's account of one trial (section 4.2); ``None`` means absent."""

    model_config = ConfigDict(frozen=True)

    card_id: str
    condition: str
    role_identification: float | None
    holder_contacted: float | None
    information_acquisition: float | None
    execution: float | None
    """Share of counted calls run by the expected executor with the reference arguments."""
    execution_name: str
    """``execution`` under direct access, ``assignment`` otherwise (section 4.2)."""
    items_missing: tuple[str, ...]
    """Keys of observable information items not acquired."""
    missing_customer: tuple[str, ...]
    missing_service: tuple[str, ...]
    approached_missing: bool
    """The agent approached the source of at least one missing item."""
    action_attempted: bool
    required_actions_done: bool
    """Every counted reference write was executed by its executor with the reference
    arguments."""
    outside_writes: int
    """Writes that executed successfully but match no reference write."""


def _fraction(hits: Sequence[bool]) -> float | None:
    return sum(hits) / len(hits) if hits else None


def _acquired(item: InformationItem, task: TaskReference, trial: TrialEvents) -> bool:
    source = item.source
    if source.kind == "field":
        return source.token in trial.released
    if source.kind == "call" and source.call is not None:
        read = task.calls[source.call]
        return any(e.ok and same_call(e.tool, e.arguments, read) for e in trial.executed)
    return False


def approached(item: InformationItem, task: TaskReference, trial: TrialEvents) -> bool:
    """Whether the agent approached the source of `item` (see the module's decisions)."""
    source = item.source
    if source.kind == "field":
        return source.token in trial.requested
    if source.kind == "call" and source.call is not None:
        read = task.calls[source.call]
        if trial.condition == "direct":
            return any(p == AGENT and t == read.tool for p, t in trial.proposed)
        holder = trial.holders.get(read.executor(trial.condition))
        return holder is not None and holder in trial.contacted
    return False


def _executed(call: ReferenceCall, trial: TrialEvents) -> bool:
    executor = trial.holders.get(call.executor(trial.condition))
    return any(
        e.ok and e.proposer == executor and same_call(e.tool, e.arguments, call)
        for e in trial.executed
    )


def read_trial(task: TaskReference, trial: TrialEvents) -> TrialReading:
    """The three coordination processes of one trial against its task's reference."""
    condition = trial.condition
    counted = task.counted_calls
    role_hits: list[bool] = []
    contact_hits: list[bool] = []
    if condition == "social":
        for assignment in task.role_assignments:
            holder = trial.holders.get(assignment.desk)
            role_hits.append(
                any(e.proposer == holder and e.tool == assignment.tool for e in trial.executed)
            )
            contact_hits.append(holder is not None and holder in trial.contacted)
    observable = task.observable_items
    acquired = [_acquired(item, task, trial) for item in observable]
    missing = [item for item, ok in zip(observable, acquired, strict=True) if not ok]
    required = task.required_actions
    writes = {name for name, spec in SERVICE_TOOLS.items() if spec.kind is ToolKind.WRITE}
    outside = [
        e
        for e in trial.executed
        if e.ok
        and e.tool in writes
        and not any(same_call(e.tool, e.arguments, c) for c in required)
    ]
    return TrialReading(
        card_id=task.card_id,
        condition=condition,
        role_identification=_fraction(role_hits) if condition == "social" else None,
        holder_contacted=_fraction(contact_hits) if condition == "social" else None,
        information_acquisition=_fraction(acquired),
        execution=_fraction([_executed(call, trial) for call in counted]),
        execution_name="execution" if condition == "direct" else "assignment",
        items_missing=tuple(item.key for item in missing),
        missing_customer=tuple(item.key for item in missing if item.customer_side),
        missing_service=tuple(item.key for item in missing if not item.customer_side),
        approached_missing=any(approached(item, task, trial) for item in missing),
        action_attempted=any(tool in writes for _, tool in trial.proposed),
        required_actions_done=all(_executed(call, trial) for call in required),
        outside_writes=len(outside),
    )
