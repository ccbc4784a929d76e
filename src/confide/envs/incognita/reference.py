"""The coordination reference: per task, the golden trajectory projected onto each condition.

Incognita (the Incognita paper, section 4.1). For each task the golden trajectory is the complete
sequence of tool calls one verified solution performs; every argument of every call is
traced to its source (the opening line, a releasable customer field, the customer's
unprompted requests, policy vocabulary, or the return value of an earlier call). Projecting
the trajectory onto a condition says who must execute each call: the evaluated agent under
direct access, the single declared desk under indirect access, the desk holding the tool's
role under social access. The reference is frozen as data (`REFERENCE_FILE`) before any
trajectory is read; `golden.build_reference` rebuilds it from the cards and a test checks
that the frozen file is exactly what the cards give.

Denominators (section 4.1, "Calls that the source task intends to fail, and reads that
serve only exploration, stay in the trajectory and stay out of the denominators"):

- a call is *counted* when it is not meant to fail and it is either a write or a call
  whose return value a counted call consumes (transitively);
- an *information item* is one distinct source that feeds a counted call: a customer field
  (by release token), a designated reference read (by trajectory index), the opening line,
  a customer request, or policy vocabulary. Only field and read items are *observable* in
  the trace (a gate release, an accepted read), so only they enter the acquisition
  denominator; the others are frozen and counted but never scored;
- a *role assignment* is one distinct (tool, holder role) pair among the counted calls in
  the socially distributed projection: the agent must get that holder to run that tool.

Decisions where the paper is silent: free-text arguments (the hand-over summary) have
source kind ``free``, feed no information item and are never compared; ``calculate`` and
``transfer_to_human_agents`` are counted only when a counted call consumes their result,
since neither changes the database the evaluator reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from confide import atomic
from confide.envs.incognita.conditions import INCOGNITA_CONDITIONS
from confide.errors import ConfideError
from confide.untrusted import InputError, load_json

SCHEMA_VERSION = 1
REFERENCE_FILE = Path(__file__).parent / "data" / "reference" / "coordination_reference.json"

SourceKind = Literal["opening", "request", "field", "policy", "call", "free"]
OBSERVABLE_KINDS: frozenset[str] = frozenset({"field", "call"})
"""Source kinds whose acquisition the trace records (gate release, accepted read)."""

AGENT_ROLE = "agent"
"""Executor role of every call under direct access (the evaluated agent itself)."""
SERVICE_ROLE = "service"
"""Executor role of every call under indirect access (the one declared desk)."""


class ReferenceDataError(ConfideError):
    """The reference cannot be built, does not replay, or its file is malformed or stale."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Frozen):
    """Where a value comes from."""

    kind: SourceKind
    token: str | None = None
    """Release token, for kind ``field``."""
    call: int | None = None
    """Trajectory index of the producing call, for kind ``call``."""
    request: int | None = None
    """Index into the card's requests, for kind ``request``."""

    @property
    def key(self) -> str:
        """Stable identifier of the information item this source is."""
        if self.kind == "field":
            return f"field:{self.token}"
        if self.kind == "call":
            return f"call:{self.call}"
        if self.kind == "request":
            return f"request:{self.request}"
        return self.kind


class ValueSource(_Frozen):
    """One scalar argument value of a call (a list argument has one per distinct element),
    its source, and the customer field that chooses it when the value itself is read from
    a service record (which items, which payment method, why cancel)."""

    argument: str
    value: str
    source: Source
    choice: str | None = None
    """Release token of the customer field that decides this value, if any."""


class ReferenceCall(_Frozen):
    """One call of the golden trajectory and who must execute it in each condition."""

    index: int
    tool: str
    kind: Literal["read", "write", "generic"]
    arguments: dict[str, JsonValue]
    origin: Literal["gold", "rule"]
    """``gold``: a card gold action kept verbatim; ``rule``: a read added by the rules."""
    expect_error: bool = False
    counted: bool
    desk: str
    """The social-condition role (desk) that holds the tool."""
    executors: dict[str, str]
    """Condition -> executor role: ``agent``, ``service`` or a desk role."""
    sources: list[ValueSource]

    def executor(self, condition: str) -> str:
        """The role that must execute this call under `condition`."""
        try:
            return self.executors[condition]
        except KeyError:
            raise ReferenceDataError(
                f"call {self.index} ({self.tool}) has no executor for condition {condition!r}"
            ) from None


class InformationItem(_Frozen):
    """A distinct source feeding counted calls (a fact the trajectory needs)."""

    key: str
    source: Source
    observable: bool
    values: list[str]
    needed_by: list[int]
    """Trajectory indices of the counted calls that consume it."""

    @property
    def customer_side(self) -> bool:
        """Held by the customer (released through the gate) rather than the service side."""
        return self.source.kind == "field"


class RoleAssignment(_Frozen):
    """A (tool, holder role) pair the socially distributed condition requires."""

    tool: str
    desk: str
    calls: list[int]


class ReferenceCounts(_Frozen):
    """The frozen counts of section 4.1 (per task, and summed over tasks)."""

    calls: int
    counted_calls: int
    role_assignments: int
    information_items: int
    observable_items: int


class TaskReference(_Frozen):
    """The coordination reference of one task card."""

    card_id: str
    card_hash: str
    """sha256 of the card's canonical JSON: the reference is stale if the card changes."""
    gold_state_hash: str
    """Final-state hash of the card's gold actions (which replaying `calls` reproduces)."""
    calls: list[ReferenceCall]
    items: list[InformationItem]
    role_assignments: list[RoleAssignment]

    @property
    def counted_calls(self) -> list[ReferenceCall]:
        return [call for call in self.calls if call.counted]

    @property
    def required_actions(self) -> list[ReferenceCall]:
        """Counted calls that write the database (the actions of section 4.3)."""
        return [call for call in self.calls if call.counted and call.kind == "write"]

    @property
    def observable_items(self) -> list[InformationItem]:
        return [item for item in self.items if item.observable]

    def counts(self) -> ReferenceCounts:
        return ReferenceCounts(
            calls=len(self.calls),
            counted_calls=len(self.counted_calls),
            role_assignments=len(self.role_assignments),
            information_items=len(self.items),
            observable_items=len(self.observable_items),
        )

    @model_validator(mode="after")
    def _consistent(self) -> TaskReference:
        for position, call in enumerate(self.calls):
            if call.index != position:
                raise ValueError(f"{self.card_id}: calls[{position}] has index {call.index}")
            if set(call.executors) != set(INCOGNITA_CONDITIONS):
                raise ValueError(
                    f"{self.card_id}: call {position} executors {sorted(call.executors)} "
                    f"must name every condition {list(INCOGNITA_CONDITIONS)}"
                )
            for value in call.sources:
                if value.source.kind == "call" and not (
                    value.source.call is not None and 0 <= value.source.call < position
                ):
                    raise ValueError(
                        f"{self.card_id}: call {position} argument {value.argument} is "
                        f"sourced from call {value.source.call}, which is not earlier"
                    )
        return self


class CoordinationReference(_Frozen):
    """The frozen coordination reference of a card suite (section 4.1)."""

    schema_version: int = SCHEMA_VERSION
    suite_id: str
    world_hash: str
    tasks: list[TaskReference]
    totals: ReferenceCounts
    counts_by_task: dict[str, ReferenceCounts] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _totals_match(self) -> CoordinationReference:
        expected = sum_counts([t.counts() for t in self.tasks])
        if self.totals != expected:
            raise ValueError(f"totals {self.totals} do not match the tasks ({expected})")
        if self.counts_by_task and self.counts_by_task != {
            t.card_id: t.counts() for t in self.tasks
        }:
            raise ValueError("counts_by_task do not match the tasks")
        return self

    def task(self, card_id: str) -> TaskReference:
        for task in self.tasks:
            if task.card_id == card_id:
                return task
        raise ReferenceDataError(f"the coordination reference has no task {card_id!r}")


def sum_counts(counts: list[ReferenceCounts]) -> ReferenceCounts:
    """Field-wise sum of counts."""
    return ReferenceCounts(
        calls=sum(c.calls for c in counts),
        counted_calls=sum(c.counted_calls for c in counts),
        role_assignments=sum(c.role_assignments for c in counts),
        information_items=sum(c.information_items for c in counts),
        observable_items=sum(c.observable_items for c in counts),
    )


def assemble(suite_id: str, world_hash: str, tasks: list[TaskReference]) -> CoordinationReference:
    """A reference over `tasks` with its totals and per-task counts filled in."""
    return CoordinationReference(
        suite_id=suite_id,
        world_hash=world_hash,
        tasks=tasks,
        totals=sum_counts([t.counts() for t in tasks]),
        counts_by_task={t.card_id: t.counts() for t in tasks},
    )


def save_reference(reference: CoordinationReference, path: Path | str = REFERENCE_FILE) -> Path:
    """Write the reference as indented JSON (the frozen data file)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return atomic.write_text(target, reference.model_dump_json(indent=1) + "\n")


def load_reference(path: Path | str = REFERENCE_FILE) -> CoordinationReference:
    """Read a frozen reference; errors name the file and the field."""
    source = Path(path)
    try:
        data = load_json(source, "coordination reference")
    except InputError as exc:
        raise ReferenceDataError(str(exc)) from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise ReferenceDataError(
            f"{source}: schema_version is {version!r}; expected {SCHEMA_VERSION}"
        )
    try:
        return CoordinationReference.model_validate(data)
    except ValueError as exc:
        raise ReferenceDataError(f"{source}: {exc}") from None
