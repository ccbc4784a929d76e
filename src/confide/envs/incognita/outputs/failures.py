"""Five failure types, and the per-trial counts reported beside them.

Incognita (the Incognita paper, section 4.3). A *failed* trial is labelled by the stage of the
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

- ``unanswerable_questions``: agent messages to a desk after which that desk executed no
  tool successfully, neither while handling the message nor in its next turn. The second
  chance keeps a desk that first restates a change and waits for confirmation, or asks
  for one missing detail, from counting as unable; what remains are out-of-remit requests,
  probes of what a desk does that it does not hold, and lookups its records could not
  answer. Absent under direct access, where no desk exists. A message still unanswered
  when the episode ends is not counted.
- ``agent_actions``: the agent's turns (messages, tool calls, invalid turns, FINAL), as the
  environment's `metrics.episode_measures` counts them;
- ``cost_agent`` / ``cost_total``: recorded model cost of the evaluated agent's calls and
  of every call of the episode (customer, gate, desks, judge included), in USD, from
  `metrics.usage_by_role`. A cost is ``None`` when any of its calls has no price (never a
  silent $0 for them); the unpriced calls are counted in ``unpriced_agent_calls`` and
  ``unpriced_calls``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from confide.core.trace import MessageDelivered, TraceEvent
from confide.envs.incognita.conditions import AGENT
from confide.envs.incognita.events import ToolExecuted
from confide.envs.incognita.metrics import episode_measures, usage_by_role
from confide.envs.incognita.outputs.reader import TrialReading


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
    cost_agent: float | None
    """None when an agent call is unpriced."""
    cost_total: float | None
    """None when any call of the episode is unpriced."""
    unpriced_agent_calls: int
    unpriced_calls: int


def unanswerable_questions(events: Iterable[TraceEvent], desks: Sequence[str]) -> int:
    """Agent questions to a desk that were not followed by any successful tool execution
    by that desk, neither while it handled them nor in its next turn (see module doc)."""
    names = set(desks)
    current: dict[str, bool] = {}
    """desk -> whether its open question has been grounded in a successful tool call"""
    waiting: set[str] = set()
    """desks whose previous, ungrounded reply awaits their next turn"""
    count = 0

    def close(desk: str) -> int:
        missed = int(desk in waiting)
        waiting.discard(desk)
        if current.pop(desk, True) is False:
            waiting.add(desk)
        return missed

    for event in events:
        if isinstance(event, ToolExecuted):
            desk = event.data.proposer
            if desk in current and event.data.ok:
                current[desk] = True
                waiting.discard(desk)
        elif isinstance(event, MessageDelivered):
            message = event.message
            if message.sender == AGENT:
                for desk in names.intersection(message.recipients):
                    if desk in current:  # the desk never replied to the previous question
                        count += close(desk)
                    current[desk] = False
            elif message.sender in current and AGENT in message.recipients:
                count += close(message.sender)
    return count + len(waiting)


def trial_counts(events: Sequence[TraceEvent], desks: Sequence[str]) -> TrialCounts:
    """Counts of one trial; `desks` are the trial's desk names (empty under direct). Turns
    and costs are the environment's own episode measures (`metrics`)."""
    usage = usage_by_role(events)
    agent_unpriced = int(usage["agent"]["unknown_cost_calls"])
    unpriced = sum(int(entry["unknown_cost_calls"]) for entry in usage.values())
    return TrialCounts(
        unanswerable_questions=unanswerable_questions(events, desks) if desks else None,
        agent_actions=int(episode_measures(events)["turns"]),
        cost_agent=None if agent_unpriced else float(usage["agent"]["cost_usd"]),
        cost_total=None if unpriced else sum(float(e["cost_usd"]) for e in usage.values()),
        unpriced_agent_calls=agent_unpriced,
        unpriced_calls=unpriced,
    )
