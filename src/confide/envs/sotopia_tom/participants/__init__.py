"""Participants of Sotopia-ToM: reference protocols and LLM prompting strategies.

Seat specs: `reference` and `leaky` (deterministic, typed payloads; `reference.py`), or a
model spec with an optional strategy, `provider/model[:strategy]`, where strategy is one
of `basic` (default), `cot-privacy`, `tom-coach`, `tom-belief`, `self-focused`
(section 5.3, A.9, A.14). Every model call is recorded in the episode trace under the
seat with purpose `act`, `coach`, `belief` or `plan`. Decoding: temperature 0 and a
per-seat seed derived from the episode seed, `max_tokens` from the environment options.
"""

from __future__ import annotations

from typing import Protocol

from confide.core.benchmark import EpisodeContext, SeatSpec
from confide.core.custom import custom_participant
from confide.core.seeding import derive_seed
from confide.envs.sotopia_tom.actions import Participant
from confide.envs.sotopia_tom.participants.base import ModelAgent
from confide.envs.sotopia_tom.participants.basic import BasicAgent
from confide.envs.sotopia_tom.participants.cot_privacy import CoTPrivacyAgent
from confide.envs.sotopia_tom.participants.reference import LeakyAgent, ReferenceAgent
from confide.envs.sotopia_tom.participants.self_focused import SelfFocusedAgent
from confide.envs.sotopia_tom.participants.tom_belief import ToMBeliefAgent
from confide.envs.sotopia_tom.participants.tom_coach import ToMCoachAgent
from confide.envs.sotopia_tom.scenario import Scenario
from confide.errors import ConfideError
from confide.llm import GenerateConfig

REFERENCES: tuple[str, ...] = ("reference", "leaky")
STRATEGIES: dict[str, type[ModelAgent]] = {
    "basic": BasicAgent,
    "cot-privacy": CoTPrivacyAgent,
    "tom-coach": ToMCoachAgent,
    "tom-belief": ToMBeliefAgent,
    "self-focused": SelfFocusedAgent,
}


class ParticipantSettings(Protocol):
    """The environment options a participant reads (the env's options model satisfies it;
    typed structurally so participants never import the env that drives them)."""

    @property
    def max_tokens(self) -> int | None: ...

    @property
    def repair_attempts(self) -> int: ...

    @property
    def memory_size(self) -> int: ...
def check_strategy(strategy: str) -> None:
    """Raise unless `strategy` is one of the five (the spec's `check_strategy`)."""
    if strategy not in STRATEGIES:
        raise ConfideError(
            f"sotopia-tom: unknown strategy {strategy!r}; available: {', '.join(STRATEGIES)}"
        )


def make_participant(
    seat: str,
    spec: SeatSpec,
    ctx: EpisodeContext,
    scenario: Scenario,
    options: ParticipantSettings,
) -> Participant:
    """The participant for one seat (module docstring)."""
    if spec.model is None:
        if spec.reference == "reference":
            return ReferenceAgent(seat)
        if spec.reference == "leaky":
            forbidden = [(ref, scenario.fact(ref).label) for ref in scenario.forbidden(seat)]
            return LeakyAgent(seat, forbidden)
        custom: Participant | None = custom_participant("sotopia-tom", seat, spec, ctx)
        if custom is not None:
            return custom
        raise ConfideError(
            f"sotopia-tom: unknown participant {spec.raw!r}; use one of "
            f"{', '.join(REFERENCES)}, provider/model[:strategy], py:module:factory or an "
            "installed participant plugin"
        )
    strategy = spec.strategy or "basic"
    check_strategy(strategy)
    config = GenerateConfig(
        temperature=0.0,
        max_tokens=options.max_tokens,
        seed=derive_seed(ctx.seed, scenario.id, seat) % 2**31,
    )
    model = ctx.model_for(seat, spec.model, "act")
    emit, attempts = ctx.trace.emit, options.repair_attempts
    if strategy == "tom-coach":
        coach = ctx.model_for(seat, spec.model, "coach")
        return ToMCoachAgent(
            seat, model, coach=coach, emit=emit, config=config, max_attempts=attempts
        )
    if strategy in ("tom-belief", "self-focused"):
        purpose = "belief" if strategy == "tom-belief" else "plan"
        cls = ToMBeliefAgent if strategy == "tom-belief" else SelfFocusedAgent
        return cls(
            seat,
            model,
            state_model=ctx.model_for(seat, spec.model, purpose),
            emit=emit,
            config=config,
            max_attempts=attempts,
            memory_size=options.memory_size,
        )
    return STRATEGIES[strategy](seat, model, emit=emit, config=config, max_attempts=attempts)


__all__ = ["REFERENCES", "STRATEGIES", "check_strategy", "make_participant"]
