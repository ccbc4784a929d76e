"""The reader's sensitivity audit: crediting accepted non-reference reads.

Incognita (the Incognita paper, appendix B.2, first audit; section 8 "Simulators and measures").
The reader acquires a service-side fact only through its designated reference read
executed with the reference arguments (section 4.1), so an agent that reached the same
fact through a different read stays ``requested_but_not_obtained``. Two re-labellings
bound that choice, for the trials of that type holding at least one accepted
non-reference read:

- *lenient*: every missing service-side item is credited, whatever the reads returned;
- *strict*: an item is credited only when a scalar somewhere in a non-reference read's
  return equals exactly one of the values the item feeds downstream (its reference
  argument values).

With the credited items removed from the missing ones, the first-match rules of section
4.3 are applied again: still missing and approached -> ``requested_but_not_obtained``,
still missing and never approached -> ``never_requested``, nothing missing ->
``obtained_but_not_delivered`` (these trials attempted no action). Decision: a read is
*non-reference* when its (tool, normalised arguments) matches no read of the task's
reference trajectory, whoever proposed it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pydantic import BaseModel, ConfigDict, JsonValue

from confide.core.trace import TraceEvent
from confide.envs.incognita.events import ToolExecuted
from confide.envs.incognita.outputs.failures import FailureType
from confide.envs.incognita.outputs.reader import (
    TrialEvents,
    TrialReading,
    approached,
    same_call,
)
from confide.envs.incognita.reference import TaskReference


class ReadAudit(BaseModel):
    """One trial's audit: its non-reference reads and the labels after crediting them."""

    model_config = ConfigDict(frozen=True)

    nonreference_reads: int
    lenient: FailureType | None
    """The label after the lenient credit; None when the audit does not apply (the trial is
    not ``requested_but_not_obtained`` or holds no accepted non-reference read)."""
    strict: FailureType | None
    """The label after the strict credit; None when the audit does not apply."""


def nonreference_returns(events: Sequence[TraceEvent], task: TaskReference) -> list[JsonValue]:
    """The returns of the trial's accepted reads that match no reference read."""
    reads = [call for call in task.calls if call.kind == "read"]
    return [
        event.data.result
        for event in events
        if isinstance(event, ToolExecuted)
        and event.data.ok
        and event.data.kind == "read"
        and not any(same_call(event.data.tool, event.data.arguments, c) for c in reads)
    ]


def scalars(value: JsonValue) -> Iterator[str]:
    """Every scalar inside a JSON value, as text (strings verbatim)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from scalars(item)
    elif value is not None:
        yield value if isinstance(value, str) else str(value)


def relabel(
    task: TaskReference, trial: TrialEvents, reading: TrialReading, credited: set[str]
) -> FailureType:
    """Section 4.3's no-action labels once the `credited` item keys count as acquired."""
    missing = [
        item
        for item in task.observable_items
        if item.key in reading.items_missing and item.key not in credited
    ]
    if not missing:
        return FailureType.OBTAINED_NOT_DELIVERED
    if any(approached(item, task, trial) for item in missing):
        return FailureType.REQUESTED_NOT_OBTAINED
    return FailureType.NEVER_REQUESTED


def audit_reads(
    events: Sequence[TraceEvent],
    task: TaskReference,
    trial: TrialEvents,
    reading: TrialReading,
    failure: FailureType | None,
) -> ReadAudit:
    """Both credits of appendix B.2's first audit for one trial."""
    returns = nonreference_returns(events, task)
    if failure is not FailureType.REQUESTED_NOT_OBTAINED or not returns:
        return ReadAudit(nonreference_reads=len(returns), lenient=None, strict=None)
    seen = {text for value in returns for text in scalars(value)}
    service = [item for item in task.observable_items if item.key in reading.missing_service]
    matched = {item.key for item in service if seen.intersection(item.values)}
    return ReadAudit(
        nonreference_reads=len(returns),
        lenient=relabel(task, trial, reading, {item.key for item in service}),
        strict=relabel(task, trial, reading, matched),
    )
