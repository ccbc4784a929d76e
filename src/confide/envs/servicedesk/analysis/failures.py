"""Five failure types, and the per-trial counts reported beside them.

Incognita (incognita.md, section 4.3). A *failed* trial is labelled by the stage of the
dependency chain where it stopped; the questions are asked in order and the first match
is the label, so the types are mutually exclusive and exhaustive over failed trials:

1. ``never_requested``: no action attempted, a required fact never obtained, and the agent
   never approached the source of any missing fact;
2. ``requested_but_not_obtained``: the same, but it approached the source of at least one;
3. ``obtained_but_not_delivered``: no action attempted although every required fact was
   obtained;
4. ``delivered_but_incorrect``: an action was attempted and the required actions were not
   all executed with the reference arguments, or an action outside the reference executed;
5. ``correct_but_unconfirmed``: the required actions all executed as the reference has
   them, and the trial failed anyway (e.g. on the output-assertion channel).

Success is decided first, by the evaluator, so a successful trajectory that departs from
the reference is never labelled (`label_failure` returns ``None``). The labels say where a
trajectory stopped, not who caused it: type 2 does not separate an inadequate request
from an unhelpful reply. Types 1-3 together are the premature-termination mode; types 1-2
are acquisition-stage and 4-5 execution-stage failures (section 6.2).

Counts (sections 6.2-6.3), all from structured events:

- ``unanswerable_questions``: agent messages to a desk that the desk answered without
  having executed any tool successfully since that message -- it could not ground a reply
  in its records (out of remit, missing details, a probe of what it does). Absent under
  direct access, where no desk exists. A question still open at the end is not counted.
- ``agent_actions``: the agent's messages plus its tool proposals (one per turn).
- ``cost_agent`` / ``cost_total``: recorded model cost of the evaluated agent's calls and
  of every call of the episode (customer, desks, judge included), in USD; calls whose
  price is unknown add nothing and are counted in ``unpriced_calls``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from confide.core.trace import EnvEvent, MessageDelivered, ModelCall, TraceEvent
from confide.envs.servicedesk.analysis.reader import TrialReading
from confide.envs.servicedesk.conditions import AGENT


class FailureType(StrEnum):
    """The five failure types of section 4.3, in first-match order."""

    NEVER_REQUESTED = "never_requested"
    REQUESTED_NOT_OBTAINED = "requested_but_not_obtained"
    OBTAINED_NOT_DELIVERED = "obtained_but_not_delivered"
    DELIVERED_INCORRECT = "delivered_but_incorrect"
    CORRECT_UNCONFIRMED = "correct_but_unconfirmed"


ACQUISITION_STAGE = frozenset({FailureType.NEVER_REQUESTED, FailureType.REQUESTED_NOT_OBTAINED})
NO_ACTION = frozenset({*ACQUISITION_STAGE, FailureType.OBTAINED_NOT_DELIVERED})
EXECUTION_STAGE = frozenset({FailureType.DELIVERED_INCORRECT, FailureType.CORRECT_UNCONFIRMED})


def label_failure(reading: TrialReading, success: bool) -> FailureType | None:
    """The failure type of a trial (section 4.3); ``None`` for a successful trial."""
    if success:
        return None
    if not reading.action_attempted:
        if reading.items_missing:
            if reading.approached_missing:
                return FailureType.REQUESTED_NOT_OBTAINED
            return FailureType.NEVER_REQUESTED
        return FailureType.OBTAINED_NOT_DELIVERED
    if not reading.required_actions_done or reading.outside_writes > 0:
        return FailureType.DELIVERED_INCORRECT
    return FailureType.CORRECT_UNCONFIRMED


class TrialCounts(BaseModel):
    """Effort and cost of one trial (sections 6.2-6.3)."""

    model_config = ConfigDict(frozen=True)

    unanswerable_questions: int | None
    agent_actions: int
    cost_agent: float
    cost_total: float
    unpriced_calls: int


def unanswerable_questions(events: Iterable[TraceEvent], desks: Sequence[str]) -> int:
    """Agent questions a desk answered without any successful tool execution since."""
    open_questions: dict[str, bool] = {}
    """desk -> whether it has grounded its pending answer in a successful tool call."""
    count = 0
    names = set(desks)
    for event in events:
        if isinstance(event, EnvEvent) and event.name == "tool_executed":
            proposer = event.data.get("proposer")
            if proposer in open_questions and event.data.get("ok"):
                open_questions[str(proposer)] = True
        elif isinstance(event, MessageDelivered):
            message = event.message
            if message.sender == AGENT:
                for desk in names.intersection(message.recipients):
                    open_questions.setdefault(desk, False)
            elif message.sender in open_questions and AGENT in message.recipients:
                count += 0 if open_questions.pop(message.sender) else 1
    return count


def trial_counts(events: Sequence[TraceEvent], desks: Sequence[str]) -> TrialCounts:
    """Counts of one trial; `desks` are the trial's desk names (empty under direct)."""
    actions = 0
    cost_agent = cost_total = 0.0
    unpriced = 0
    for event in events:
        if isinstance(event, MessageDelivered) and event.message.sender == AGENT:
            actions += 1
        elif isinstance(event, EnvEvent) and event.name == "tool_proposed":
            actions += int(event.data.get("proposer") == AGENT)
        elif isinstance(event, ModelCall) and event.completion is not None:
            usage = event.completion.get("usage") or {}
            cost = usage.get("cost_usd")
            if cost is None:
                unpriced += 1
                continue
            cost_total += float(cost)
            if event.seat == AGENT:
                cost_agent += float(cost)
    return TrialCounts(
        unanswerable_questions=unanswerable_questions(events, desks) if desks else None,
        agent_actions=actions,
        cost_agent=cost_agent,
        cost_total=cost_total,
        unpriced_calls=unpriced,
    )
