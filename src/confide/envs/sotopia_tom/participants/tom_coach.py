"""ToM-Coach (sections 5.3, A.9): a separate, stateless model call at every turn.

The coach sees the focal agent's card and its whole perspective-filtered history -- never
anything the agent did not see -- and returns a structured note: the other agents'
intentions, what they believe about the agent, what they believe about each other,
privacy risks, and a recommended next move. The note is injected into the acting prompt,
which uses the shared ToM reasoning (mental-state table, strategic sharing, leakage
guard). The coach keeps no memory between turns: it rebuilds its analysis from the full
history every time. The note is also recorded as a `coach_note` event visible only to the
agent; a coach call that never validates is a `coach_failure` and the agent acts without
a note. A retry in the same round (after refused recipients) reuses that round's note.

Prompt order: the coach's prompt is its fixed instructions, the agent's card,
then the whole history, which only grows, so each coach call starts with the previous
one. Its JSON schema goes with the request as the response format, not in the text.
The note goes into the acting prompt as compact JSON (no indentation): the same fields
and values in fewer tokens, and a smaller part of the acting prompt that is new at every
turn.
"""

from __future__ import annotations

from confide.envs.sotopia_tom import events as ev
from confide.envs.sotopia_tom.actions import InfoObservation
from confide.envs.sotopia_tom.participants.base import Emit, ModelAgent, ToMReply
from confide.envs.sotopia_tom.participants.context import render_card, render_history
from confide.envs.sotopia_tom.prompts import render
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured

Intention = ev.Intention
CoachNote = ev.CoachNote
"""The coach's reply schema, which is also its event's payload."""


class ToMCoachAgent(ModelAgent):
    """ToM acting prompt plus a fresh coach note every turn."""

    strategy = "tom-coach"
    guidance = "tom.txt"
    reply_schema = ToMReply

    def __init__(
        self,
        name: str,
        model: ChatModel,
        *,
        coach: ChatModel,
        emit: Emit,
        config: GenerateConfig,
        max_attempts: int = 3,
    ) -> None:
        super().__init__(name, model, emit=emit, config=config, max_attempts=max_attempts)
        self.coach = coach
        self._note: tuple[int, CoachNote | None] | None = None

    def coach_messages(self, observation: InfoObservation) -> list[ChatMessage]:
        """The coach's prompt: card and full history of the focal agent only."""
        briefing = observation.briefing
        context = "\n\n".join(
            [
                render_card(briefing, observation.limits),
                "CONVERSATION SO FAR\n" + render_history(observation.history, observation.agent),
            ]
        )
        prompt = render(
            "coach.txt",
            name=briefing.name,
            role=briefing.role,
            context=context,
        )
        return [ChatMessage(role="user", content=prompt)]

    async def prepare(self, observation: InfoObservation) -> None:
        if self._note is not None and self._note[0] == observation.round:
            return
        result = await generate_structured(
            self.coach,
            self.coach_messages(observation),
            CoachNote,
            config=self.config,
            max_attempts=self.max_attempts,
        )
        note = result.value if result.ok else None
        self._note = (observation.round, note)
        if note is None:
            self.failure(ev.CoachFailure, observation, result.error)
            return
        self.emit(
            ev.CoachNoted(
                seat=self.name, round=observation.round, data=note, visible_to=[self.name]
            )
        )

    def notes(self, observation: InfoObservation) -> list[str]:
        if self._note is None or self._note[1] is None:
            return []
        return [
            "ADVICE FROM YOUR PRIVATE COACH (written for this turn)\n"
            + self._note[1].model_dump_json()
        ]
