"""The persistent structured state shared by ToM-Belief and Self-Focused (sections 5.3,
6.2, A.9, A.14).

Both strategies keep one state object per agent, built by an initialisation call on the
agent's first turn (from its card, before it has said anything) and revised at every
later turn by an update call that receives the current state and only the messages the
agent sent or received since the previous update. The state has four parts: a slot that
differs between the two strategies (per-agent beliefs for ToM-Belief, a self-focused
plan for Self-Focused), a sharing-progress tracker (shared / not yet shared / acquired /
still needed, and the objective status Not started -> In progress -> Mostly complete ->
Complete), a bounded memory of salient events (at most `memory_size` entries: the prompt
states the bound and older entries are dropped after every update), and a privacy risk
log of probing attempts with their round and author. Same token budget, same cadence, same
tracker, memory and log for both strategies; only the slot and the acting guidance differ.

Prompt order: both prompts are the agent's card as the system message, exactly as the
acting prompt's system message starts (section 5.3, A.9: "all four strategies share the
same system context"), then a user message with the fixed instructions and, for an
update, the current state and the new messages, which change every time and so come
last; the paper (A.9: the update "receives only the new messages and the current state")
rules out a growing conversation here. So a seat's first update starts with its
initialisation's card, and, where a cache does not put the response schema first (vLLM,
llama.cpp), its first acting call does too. Same information and wording as before; the
card used to open the one user message under the label "YOUR CARD", which a card in a
message of its own does not need, so the label went. The state's JSON schema goes
with the request as its response format (`generate_structured`), not in the text. The
state is shown as compact JSON (no indentation), in the update prompt and in the acting
prompt's notes alike: the same fields and values in fewer tokens, and a smaller part of
the acting prompt that is new at every turn (the update prompt used to escape non-ASCII
letters, so a name like Zsófia read differently there than on the card; it no longer
does).

The state is persisted in the trace turn by turn: every turn emits one `<state_event>`
event visible only to the agent, with the phase (`init`, `update`, `unchanged`), the ids
of the messages processed, whether the call succeeded, and the full state. A failed call
keeps the previous state (and says so in the event); a failed initialisation leaves no
state and the next update builds one from scratch.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel

from confide.envs.sotopia_tom import events as ev
from confide.envs.sotopia_tom.actions import InfoObservation
from confide.envs.sotopia_tom.participants.base import Emit, ModelAgent
from confide.envs.sotopia_tom.participants.context import render_card, render_history
from confide.envs.sotopia_tom.prompts import render
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured

ObjectiveStatus = Literal["not started", "in progress", "mostly complete", "complete"]


class SharingProgress(BaseModel):
    shared: list[str]
    not_yet_shared: list[str]
    acquired: list[str]
    still_needed: list[str]
    objective_status: ObjectiveStatus


class MemoryEvent(BaseModel):
    round: int
    event: str


class RiskEntry(BaseModel):
    round: int
    agent: str
    probe: str


class AgentBelief(BaseModel):
    """What you believe about one other participant."""

    agent: str
    knows: list[str]
    does_not_know: list[str]
    wants: list[str]
    thinks_about_me: str


class BeliefState(BaseModel):
    """Your private belief state: beliefs about each other participant, sharing
    progress, bounded memory, privacy risk log (ToM-Belief)."""

    beliefs: list[AgentBelief]
    progress: SharingProgress
    memory: list[MemoryEvent]
    privacy_risks: list[RiskEntry]


class PlanningState(BaseModel):
    """Your own plan (Self-Focused's slot in place of the beliefs, A.14)."""

    next_actions: list[str]
    blockers: list[str]
    conversation_strategy: str


class SelfFocusedState(BaseModel):
    """Your private working state: your plan, sharing progress, bounded memory,
    privacy risk log (Self-Focused)."""

    plan: PlanningState
    progress: SharingProgress
    memory: list[MemoryEvent]
    privacy_risks: list[RiskEntry]


State = BeliefState | SelfFocusedState


class StatefulAgent(ModelAgent):
    """A model agent with a persistent state revised from new messages only."""

    state_schema: ClassVar[type[State]]
    init_prompt: ClassVar[str]
    update_prompt: ClassVar[str]
    state_event: ClassVar[type[ev.BeliefUpdated] | type[ev.PlanUpdated]]
    state_title: ClassVar[str]

    def __init__(
        self,
        name: str,
        model: ChatModel,
        *,
        state_model: ChatModel,
        emit: Emit,
        config: GenerateConfig,
        max_attempts: int = 3,
        memory_size: int = 8,
    ) -> None:
        super().__init__(name, model, emit=emit, config=config, max_attempts=max_attempts)
        self.state_model = state_model
        self.memory_size = memory_size
        self.state: State | None = None
        self._initialised = False
        self._last_id = -1
        self._last_round = 0

    async def _call(self, card: str, prompt: str) -> tuple[State | None, str | None]:
        result = await generate_structured(
            self.state_model,
            [ChatMessage(role="system", content=card), ChatMessage(role="user", content=prompt)],
            self.state_schema,
            config=self.config,
            max_attempts=self.max_attempts,
        )
        if not result.ok or result.value is None:
            return None, result.error or "no valid reply"
        state = result.value
        state.memory = state.memory[-self.memory_size :]
        return state, None

    def _values(self, observation: InfoObservation) -> dict[str, object]:
        briefing = observation.briefing
        return {
            "name": briefing.name,
            "role": briefing.role,
            "others": ", ".join(m.name for m in briefing.members if m.name != briefing.name),
            "memory_size": self.memory_size,
        }

    async def prepare(self, observation: InfoObservation) -> None:
        values = self._values(observation)
        card = render_card(observation.briefing, observation.limits)
        phase = "unchanged"
        errors: list[str] = []
        if not self._initialised:
            self._initialised = True
            phase = "init"
            self.state, error = await self._call(card, render(self.init_prompt, **values))
            errors += [f"init: {error}"] if error else []
        new = [m for m in observation.history if m.id > self._last_id]
        if new:
            phase = "update" if phase == "unchanged" else "init+update"
            current = (
                self.state.model_dump_json()
                if self.state is not None
                else "(empty: build the state from scratch)"
            )
            state, error = await self._call(
                card,
                render(
                    self.update_prompt,
                    **values,
                    state=current,
                    new_messages=render_history(new, observation.agent),
                ),
            )
            if state is not None:
                self.state = state
            errors += [f"update: {error}"] if error else []
            self._last_id = new[-1].id
        if phase == "unchanged" and self._last_round == observation.round:
            return
        self._last_round = observation.round
        self.emit(
            self.state_event(
                seat=self.name,
                round=observation.round,
                data=ev.StateData(
                    phase=phase,
                    new_messages=[m.id for m in new],
                    ok=not errors,
                    errors=errors,
                    state=None if self.state is None else self.state.model_dump(),
                ),
                visible_to=[self.name],
            )
        )

    def notes(self, observation: InfoObservation) -> list[str]:
        if self.state is None:
            return []
        return [f"{self.state_title}\n" + self.state.model_dump_json()]
