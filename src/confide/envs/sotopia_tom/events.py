"""Sotopia-ToM's trace events: one class per kind, listed in `EVENTS`.

The conversation (env.py, section 3.1) records each round's start, refused recipients and
departures and how it ended; the judge (section 4, A.7) records one verdict per metric;
the LLM strategies (section 5.3, A.9, A.14) record their failed calls, the coach's note
and the per-turn belief or planning state. On disk each is an `env` line whose `data`
holds the fields of its `...Data` class.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from confide.core.trace import EnvEvent, EventData


class RoundStart(EnvEvent):
    """A round of the round-robin opens for the agents present."""

    name: Literal["round_start"] = "round_start"


class Left(EnvEvent):
    """An agent left the conversation (seen by those still present)."""

    name: Literal["left"] = "left"


class InvalidRecipientsData(EventData):
    to: list[str]
    problem: str
    attempt: int


class InvalidRecipients(EnvEvent):
    """A message addressed to no present agent: refused (and re-asked once, if set)."""

    name: Literal["invalid_recipients"] = "invalid_recipients"
    data: InvalidRecipientsData


class ConversationEndData(EventData):
    reason: str
    rounds: int
    turns: int
    left: dict[str, int]


class ConversationEnd(EnvEvent):
    name: Literal["conversation_end"] = "conversation_end"
    data: ConversationEndData


Metric = Literal["da", "ia", "cpv", "eff"]
"""The judged metrics (section 4)."""


class JudgeVerdictData(EventData):
    metric: Metric
    judge: str
    verdict: dict[str, Any] | None
    """The metric's verdict model as JSON; None when the judge never answered validly."""
    failure: str | None


class JudgeVerdict(EnvEvent):
    """The judge's verdict on one metric (section 4)."""

    name: Literal["judge_verdict"] = "judge_verdict"
    data: JudgeVerdictData


class FailureData(EventData):
    strategy: str
    error: str


class InvalidOutput(EnvEvent):
    """An acting call that never validated: the agent does nothing this turn."""

    name: Literal["invalid_output"] = "invalid_output"
    data: FailureData


class CoachFailure(EnvEvent):
    """A coach call that never validated: the agent acts without a note (A.9)."""

    name: Literal["coach_failure"] = "coach_failure"
    data: FailureData


class Intention(BaseModel):
    agent: str
    intention: str


class CoachNote(EventData):
    """Your advisory note: intentions, beliefs, privacy risks, recommendation (A.9)."""

    # also the coach's reply schema: extra keys are ignored, as in any reply (A.9)
    model_config = ConfigDict(extra="ignore")

    intentions: list[Intention]
    beliefs_about_me: str
    beliefs_about_each_other: str
    privacy_risks: list[str]
    recommendation: str


class CoachNoted(EnvEvent):
    """The ToM coach's note for this turn (its reply schema is `CoachNote`, A.9)."""

    name: Literal["coach_note"] = "coach_note"
    data: CoachNote


class StateData(EventData):
    phase: str
    new_messages: list[int]
    ok: bool
    errors: list[str]
    state: dict[str, Any] | None
    """The strategy's state model as JSON; None before it first validated."""


class StateUpdated(EnvEvent):
    """A stateful strategy's state after this turn's update."""

    data: StateData


class BeliefUpdated(StateUpdated):
    """ToM-Belief's mental-state table (A.9)."""

    name: Literal["belief_state"] = "belief_state"


class PlanUpdated(StateUpdated):
    """Self-Focused's plan (A.14)."""

    name: Literal["planning_state"] = "planning_state"


EVENTS: tuple[type[EnvEvent], ...] = (
    RoundStart, Left, InvalidRecipients, ConversationEnd, JudgeVerdict, InvalidOutput,
    CoachFailure, CoachNoted, BeliefUpdated, PlanUpdated,
)
