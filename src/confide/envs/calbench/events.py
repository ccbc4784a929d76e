"""CalBench's trace events: one class per kind, listed in `EVENTS`.

The engine (engine/game.py) records the game as it is played (section 4.1, A.4): the
game and its seats, each round's meeting, every CHEAP_TALK turn, every VOLUNTARY and
DECISION batch (submitted, rejected, failed or applied, with the committed moves), and
each round's resolution and any consistency violation. The LLM agent adds its system
prompt and its replies that never validated; the privacy measurements (section 3.2, F.3,
I.2) add one answer per (round, observer). On disk each is an `env` line whose `data`
holds the fields of its `...Data` class.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from confide.core.trace import EnvEvent, EventData

Phase = Literal["CHEAP_TALK", "VOLUNTARY", "DECISION"]
ToolDict = dict[str, Any]
"""A tool call as recorded (`actions.tool_dict`): its non-None fields."""


class GameStartData(EventData):
    task_id: str
    scenario_seed: int | None
    num_agents: int
    num_slots: int
    num_meetings: int
    cost_setting: str
    condition: str
    channels: list[str]
    max_turns_per_round: int | None
    decision_retries: int
    optimal_cost: int | None
    greedy_cost: int | None


class GameStart(EnvEvent):
    """The game's setup (bookkeeping)."""

    name: Literal["game_start"] = "game_start"
    data: GameStartData


class AgentRegisteredData(EventData):
    agent: int
    participant: str
    calendar: str


class AgentRegistered(EnvEvent):
    """A seat joins with its participant and rendered starting calendar."""

    name: Literal["agent_registered"] = "agent_registered"
    data: AgentRegisteredData

    def shown_state(self) -> dict[str, str]:
        return {"calendar": self.data.calendar}


class MeetingInfo(EventData):
    meeting_id: int
    participants: list[int]
    cost: int


class RoundStartData(EventData):
    meeting: MeetingInfo
    speaker_order: list[int]


class RoundStart(EnvEvent):
    """A round opens on one meeting request (A.4)."""

    name: Literal["round_start"] = "round_start"
    data: RoundStartData


class TurnStartData(EventData):
    turn: int
    phase: Phase
    inbox: list[int]
    """Ids of the messages the seat sees for the first time."""


class TurnStart(EnvEvent):
    name: Literal["turn_start"] = "turn_start"
    data: TurnStartData


class TurnEndData(EventData):
    turn: int
    phase: Phase
    tool_calls: list[ToolDict]
    thinking: str | None


class TurnEnd(EnvEvent):
    name: Literal["turn_end"] = "turn_end"
    data: TurnEndData


class InvalidToolCallData(EventData):
    phase: Phase
    tool_call: ToolDict
    reason: str


class InvalidToolCall(EnvEvent):
    """A tool call the engine refused, with the reason."""

    name: Literal["invalid_tool_call"] = "invalid_tool_call"
    data: InvalidToolCallData


class DecideStartData(EventData):
    phase: Phase
    attempt: int
    calendar: str


class DecideStart(EnvEvent):
    name: Literal["decide_start"] = "decide_start"
    data: DecideStartData

    def shown_state(self) -> dict[str, str]:
        return {"calendar": self.data.calendar}


class DecideEndData(EventData):
    phase: Phase
    attempt: int
    tool_calls: list[ToolDict]
    thinking: str | None


class DecideEnd(EnvEvent):
    name: Literal["decide_end"] = "decide_end"
    data: DecideEndData


class BatchRejectedData(EventData):
    phase: Phase
    attempt: int
    conflicts: list[str]
    actions: list[ToolDict]


class BatchRejected(EnvEvent):
    """A batch that did not validate; the seat may retry (A.4)."""

    name: Literal["batch_rejected"] = "batch_rejected"
    data: BatchRejectedData


class BatchFailedData(EventData):
    phase: Phase
    attempts: int


class BatchFailed(EnvEvent):
    """No batch validated within the retry budget."""

    name: Literal["batch_failed"] = "batch_failed"
    data: BatchFailedData


class Move(EventData):
    """One committed calendar move."""

    kind: Literal["errand", "meeting"]
    item_id: int
    from_slot: int | None
    to_slot: int | None
    cost: int


class BatchAppliedData(EventData):
    phase: Phase
    actions: list[ToolDict]
    moves: list[Move]
    cost: int
    display_cost: int
    """The cost as shown to the agent (the scenario's display scale)."""
    calendar: str


class BatchApplied(EnvEvent):
    """A committed batch: its moves and their cost."""

    name: Literal["batch_applied"] = "batch_applied"
    data: BatchAppliedData

    def shown_state(self) -> dict[str, str]:
        return {"calendar": self.data.calendar}


class ConsistencyViolationData(EventData):
    meeting_id: int
    slots: dict[str, int | None]


class ConsistencyViolation(EnvEvent):
    """A meeting whose participants no longer hold it in one common slot."""

    name: Literal["consistency_violation"] = "consistency_violation"
    data: ConsistencyViolationData


class ResolutionData(EventData):
    meeting_id: int
    resolved: bool
    slots: dict[str, int | None]
    reason: str | None
    turns: int
    consistency_violations: list[int]


class Resolution(EnvEvent):
    """The round's outcome for its meeting (A.4 RESOLUTION)."""

    name: Literal["resolution"] = "resolution"
    data: ResolutionData


class AgentPromptData(EventData):
    agent: int
    participant: str
    prompt_version: str
    variant: str | None
    variant_source: str | None
    variant_sha256: str | None
    adversarial: bool
    system_prompt: str


class AgentPrompt(EnvEvent):
    """An LLM seat's system prompt (and adversarial variant, if any)."""

    name: Literal["agent_prompt"] = "agent_prompt"
    data: AgentPromptData


class InvalidResponseData(EventData):
    phase: Phase
    turn: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """Set in CHEAP_TALK."""
    attempt: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """Set in VOLUNTARY and DECISION."""
    attempts: int
    problems: list[str | None]
    causes: list[str] = Field(default_factory=list)
    """Per attempt: "truncated" (finish_reason length) or "format"."""


class InvalidResponse(EnvEvent):
    """An LLM seat's reply that never validated; the seat passes the step."""

    name: Literal["invalid_response"] = "invalid_response"
    data: InvalidResponseData


class AnswerData(EventData):
    """One observer's slot-delta answer about every other agent (I.2): `deltas` maps
    target agent (as a string) to one delta per slot; None when it never validated."""

    observer: int
    ok: bool
    deltas: dict[str, list[int]] | None
    attempts: int
    error: str | None
    prompt_version: str


class ReflectionData(AnswerData):
    context: Literal["thread", "transcript"]


class JudgeCaseData(AnswerData):
    judge: str
    message_ids: list[int]


class Reflection(EnvEvent):
    """A seat's own answer after a round (F.3; bookkeeping, no seat observes it)."""

    name: Literal["reflection"] = "reflection"
    data: ReflectionData


class JudgeCase(EnvEvent):
    """The external judge's answer for one (round, recipient) (I.2; bookkeeping)."""

    name: Literal["judge_case"] = "judge_case"
    data: JudgeCaseData


Answer = Reflection | JudgeCase

EVENTS: tuple[type[EnvEvent], ...] = (
    GameStart, AgentRegistered, RoundStart, TurnStart, TurnEnd, InvalidToolCall,
    DecideStart, DecideEnd, BatchRejected, BatchFailed, BatchApplied, ConsistencyViolation,
    Resolution, AgentPrompt, InvalidResponse, Reflection, JudgeCase,
)
