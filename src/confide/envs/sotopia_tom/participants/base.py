"""The LLM participant: one chat model plus a prompt policy (sections 5.3, A.9).

`ModelAgent.act` renders the shared card (plus the strategy's guidance) as the system
prompt and the perspective-filtered history (plus the strategy's notes) as the user
prompt, asks for a JSON reply with `generate_structured` (bounded repair: every parse or
schema problem is sent back to the model), and maps the reply's `action` to an
`InfoAction`. A reply that never validates is a typed failure: it is recorded as an
`invalid_output` event visible only to the agent and the turn counts as `none`. Model
errors (network, missing extra) propagate: they are infrastructure failures, not the
agent's. Reasoning fields stay in the model call record and are never delivered.

Every strategy builds on the Basic prompt (A.9: "all four strategies share the same
system context"; section 5.3 layers each method's scaffolding on top of the baseline):
the system prompt is the card, the baseline guidance (prompts/basic.txt) and then the
strategy's own part, so the strategies cannot drift away from the baseline.
Subclasses set `guidance` (a prompt file with their own part, or None), `reply_schema`, and may
override `prepare` (extra calls before acting: coach note, state update) and `notes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from confide.core.trace import EnvEvent
from confide.envs.sotopia_tom import events as ev
from confide.envs.sotopia_tom.actions import InfoAction, InfoObservation
from confide.envs.sotopia_tom.participants.context import render_card, turn_prompt
from confide.envs.sotopia_tom.prompts import render
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured

Emit = Callable[[EnvEvent], None]
BASELINE = "basic.txt"
"""The Basic prompt's guidance, shared by every strategy."""
REPLY_FORMAT = "Reply with one JSON object that follows the reply schema, and nothing else."
"""The fixed format line, at the end of the system prompt (it used to close every turn
prompt; the per-turn prompt now ends with "Choose your next action." alone)."""


class ActionChoice(BaseModel):
    """The action part of every reply."""

    action_type: Literal["speak", "none", "leave"]
    to: list[str] = Field(
        default_factory=list,
        description="Empty: public message to everyone. Names: private message to them only.",
    )
    content: str = Field(default="", description="What you say (only for speak).")

    def to_action(self) -> InfoAction:
        return InfoAction(
            action_type=self.action_type, to=tuple(self.to), text=self.content.strip()
        )


class BasicReply(BaseModel):
    """Your action (Basic prompting has no reasoning fields)."""

    action: ActionChoice


class CoTReply(BaseModel):
    """Your four private reasoning steps, then your action (CoT-Privacy, Self-Focused)."""

    goal_progress: str
    information_exchange: str
    channel_decision: str
    leakage_check: str
    action: ActionChoice


class MentalState(BaseModel):
    """What one other participant knows, wants and thinks about you."""

    agent: str
    knows: str
    wants: str
    thinks_about_me: str


class ToMReply(BaseModel):
    """Your private reasoning about the others, then your action (ToM-Coach, ToM-Belief)."""

    mental_states: list[MentalState]
    sharing_plan: str
    leakage_guard: str
    action: ActionChoice


Reply = BasicReply | CoTReply | ToMReply


class ModelAgent:
    """An LLM participant (module docstring)."""

    strategy: ClassVar[str]
    guidance: ClassVar[str | None]
    reply_schema: ClassVar[type[Reply]]

    def __init__(
        self,
        name: str,
        model: ChatModel,
        *,
        emit: Emit,
        config: GenerateConfig,
        max_attempts: int = 3,
    ) -> None:
        self.name = name
        self.model = model
        self.emit = emit
        self.config = config
        self.max_attempts = max_attempts

    def system_prompt(self, observation: InfoObservation) -> str:
        parts = [render_card(observation.briefing, observation.limits), render(BASELINE)]
        if self.guidance is not None:
            parts.append(render(self.guidance))
        parts.append(REPLY_FORMAT)
        return "\n\n".join(parts)

    async def prepare(self, observation: InfoObservation) -> None:
        """Extra model calls before acting (none for stateless strategies)."""

    def notes(self, observation: InfoObservation) -> list[str]:
        """Extra sections of the turn prompt."""
        return []

    async def act(self, observation: InfoObservation) -> InfoAction:
        await self.prepare(observation)
        messages = [
            ChatMessage(role="system", content=self.system_prompt(observation)),
            ChatMessage(
                role="user",
                content=turn_prompt(observation, self.notes(observation)),
            ),
        ]
        result = await generate_structured(
            self.model,
            messages,
            self.reply_schema,
            config=self.config,
            max_attempts=self.max_attempts,
        )
        if not result.ok or result.value is None:
            self.failure(ev.InvalidOutput, observation, result.error)
            return InfoAction.none()
        return result.value.action.to_action()

    def failure(
        self,
        kind: type[ev.InvalidOutput | ev.CoachFailure],
        observation: InfoObservation,
        error: str | None,
    ) -> None:
        """Record a typed failure of one of this agent's calls."""
        self.emit(
            kind(
                seat=self.name,
                round=observation.round,
                data=ev.FailureData(strategy=self.strategy, error=error or "no valid reply"),
                visible_to=[self.name],
            )
        )
