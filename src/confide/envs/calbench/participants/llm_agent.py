"""The CalBench LLM agent: a chat model plus the A.2/A.3 prompt policy (the CalBench paper
section 3 "Round structure", A.2, A.3, A.5).

One conversation thread per agent for the whole game (A.3): the system prompt once, then
one user message per observation, each followed by the assistant reply that was used. The
thread only grows, so every request starts with the previous request's messages: a
stable prefix that provider prompt caching can reuse (sections 1-7 of the system prompt
are also identical across agents and games).

Each reply is asked for as the `{"thinking", "actions"}` envelope with its JSON schema as
`response_schema` and parsed by `generate_structured`; a reply that does not parse or
validate is answered with a repair message stating exactly what was wrong, up to
`max_attempts` calls. When every attempt fails the agent passes (no actions) and the turn
is recorded as an `invalid_response` event visible only to this seat; the next user
message starts with a short note that the reply could not be read. `thinking` goes back
to the engine inside the envelope, which logs it in the seat-private `turn_end` /
`decide_end` events and never routes it. The system prompt is built when the seat is
made, from the task (agent ids, slot count), the episode's communication condition (the
one open channel), the retry budget and the variant, and recorded then as an
`agent_prompt` event with the variant's name, source and hash (A.6 agent_registered), so
every model seat has its prompt in the trace even if it never speaks.

Choices the text does not decide (A.3 keeps "one per-agent conversation thread alive for
the full multi-round game" but says nothing of format repairs, decoding or defaults): the
thread keeps the accepted reply of each step and not the repair exchanges (those are in
the trace as model calls); after a failed step it keeps the last raw reply, so user and
assistant turns still alternate; decoding is at
temperature 0 with no token cap unless the sampling settings set one (512 and a bounded
reply schema for embedded local models, see llm_parse.py; a reply cut off at the cap is
an invalid reply of cause "truncated"); the episode's condition defaults to `dm`, as in
the environment.
"""

from __future__ import annotations

from typing import Any

from confide.core.benchmark import EpisodeContext, SeatSpec
from confide.core.trace import TraceRecorder
from confide.envs.calbench import events as ev
from confide.envs.calbench.actions import (
    CONDITION_CHANNELS,
    CONDITIONS,
    CalendarObservation,
    ChannelName,
    CheapTalkObservation,
    Envelope,
    agent_of,
)
from confide.envs.calbench.participants.llm_parse import (
    ReplyEnvelope,
    bounded_reply_schema,
    reply_schema,
    to_envelope,
)
from confide.envs.calbench.participants.llm_render import system_prompt, user_message
from confide.envs.calbench.prompts import (
    PROMPT_VERSION,
    PromptError,
    Variant,
    load_variant,
    render,
)
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured

LOCAL_MAX_TOKENS = 512
"""Embedded `local/...` models are tiny and run on CPU; they get the bounded reply schema,
whose longest reply fits in this budget, so no reply is cut off."""
MAX_ATTEMPTS = 3
"""Calls per step: the first answer plus two repairs."""


def default_config(model: str, *, max_tokens: int | None = None) -> GenerateConfig:
    """Decoding settings of every call of `model` (the reply schema attached, so providers
    that can constrain decoding to it do; embedded models get the bounded schema).

    `max_tokens` is the seam for a per-role budget from the run's sampling settings. By
    default no cap is sent (the provider's own limit applies): on a reasoning model a cap
    also counts the hidden reasoning, so a fixed one would cut replies off or empty them. Embedded
    `local/` models keep their 512, which fits every reply of
    the bounded schema."""
    if model.startswith("local/"):
        return GenerateConfig(
            temperature=0.0,
            max_tokens=max_tokens or LOCAL_MAX_TOKENS,
            response_schema=bounded_reply_schema(),
        )
    return GenerateConfig(temperature=0.0, max_tokens=max_tokens, response_schema=reply_schema())


class LlmAgent:
    """A CalBench seat played by a chat model (see the module docstring)."""

    def __init__(
        self,
        seat: str,
        model: ChatModel,
        trace: TraceRecorder,
        *,
        name: str,
        system_prompt: str,
        channels: tuple[ChannelName, ...],
        variant: Variant | None = None,
        config: GenerateConfig | None = None,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.name = name
        self.seat = seat
        self.agent = agent_of(seat)
        self.model = model
        self.trace = trace
        self.channels = channels
        self.config = config or default_config(model.name)
        self.max_attempts = max_attempts
        self.thread: list[ChatMessage] = [ChatMessage(role="system", content=system_prompt)]
        self._notice: str | None = None
        trace.emit(
            ev.AgentPrompt(
                seat=seat,
                data=ev.AgentPromptData(
                    agent=self.agent,
                    participant=name,
                    prompt_version=PROMPT_VERSION,
                    variant=None if variant is None else variant.name,
                    variant_source=None if variant is None else variant.source,
                    variant_sha256=None if variant is None else variant.sha256,
                    adversarial=variant is not None and variant.adversarial,
                    system_prompt=system_prompt,
                ),
                visible_to=[seat],
            )
        )

    def reflection_context(self) -> tuple[ChatMessage, ...]:
        """The agent's own thread so far, for measurement-only reflection calls (F.3):
        privacy/reflection.py appends its question to a copy, never to the thread."""
        return tuple(self.thread)

    async def act(self, observation: CalendarObservation) -> Envelope:
        if observation.channels != self.channels:
            raise ConfideError(
                f"calbench: {self.seat}'s prompt names channels {list(self.channels)} but the "
                f"game opens {list(observation.channels)}"
            )
        text = user_message(observation)
        if self._notice is not None:
            text = f"{self._notice}\n\n{text}"
            self._notice = None
        self.thread.append(ChatMessage(role="user", content=text))
        result = await generate_structured(
            self.model,
            self.thread,
            ReplyEnvelope,
            config=self.config,
            max_attempts=self.max_attempts,
        )
        if result.attempts:  # none when the thread outgrew the model's context
            last = result.attempts[-1].completion.text
            self.thread.append(ChatMessage(role="assistant", content=last))
        if result.ok and result.value is not None:
            return to_envelope(result.value)
        problem = result.error or "no reply"
        self._notice = render("invalid_notice", problem=problem.rstrip("."))
        self.trace.emit(
            ev.InvalidResponse(
                seat=self.seat,
                round=observation.round,
                data=ev.InvalidResponseData(
                    **_step(observation),
                    attempts=len(result.attempts),
                    problems=[a.problem for a in result.attempts],
                    causes=[a.cause for a in result.attempts],
                ),
                visible_to=[self.seat],
            )
        )
        return Envelope()


def _step(obs: CalendarObservation) -> dict[str, Any]:
    """Which step of the round an observation asks for (for the invalid-response event)."""
    if isinstance(obs, CheapTalkObservation):
        return {"phase": "CHEAP_TALK", "turn": obs.turn}
    return {"phase": obs.phase.upper(), "attempt": obs.attempt}


def make_llm_agent(
    seat: str, spec: SeatSpec, ctx: EpisodeContext, *, decision_retries: int
) -> LlmAgent:
    """The LLM agent for a model seat spec `provider/model[:variant]` in the episode `ctx`
    (its task, communication condition and model factory, which records every call in the
    trace under `seat`)."""
    model_name = spec.model
    task = ctx.task
    if model_name is None:
        raise ConfideError(f"calbench: {seat}: {spec.raw!r} is not a model spec")
    if not isinstance(task, Scenario):
        raise ConfideError(f"calbench: task must be a Scenario, got {type(task).__name__}")
    condition = ctx.condition or CONDITIONS[0]
    if condition not in CONDITION_CHANNELS:
        raise ConfideError(
            f"calbench: unknown condition {condition!r}; use one of {', '.join(CONDITIONS)}"
        )
    try:
        variant = load_variant(spec.strategy) if spec.strategy else None
    except PromptError as exc:
        raise PromptError(f"calbench: {seat} ({spec.raw}): {exc}") from None
    channels = CONDITION_CHANNELS[condition]
    prompt = system_prompt(
        agent=agent_of(seat),
        all_agents=tuple(range(task.num_agents)),
        num_slots=task.num_slots,
        channels=channels,
        decision_retries=decision_retries,
        variant=variant,
    )
    return LlmAgent(
        seat,
        ctx.model_for(seat, model_name, "act"),
        ctx.trace,
        name=spec.raw,
        system_prompt=prompt,
        channels=channels,
        variant=variant,
    )
