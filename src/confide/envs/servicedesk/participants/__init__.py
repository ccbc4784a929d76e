"""Incognita's participants and how seats and roles bind to them.

The evaluated agent fills the one seat (``agent``) of the lineup: ``reference`` (LLM-free,
knows its card) or a model spec. Simulated parties are bound by role:

- ``customer``: ``scripted`` (default) or a model spec;
- ``desk``: ``scripted`` (default) or a model spec, for every desk of the condition;
- ``gate``: the model that names the field a message asks for; default: the customer's
  model when the customer is a model, else the LLM-free keyword matcher (``keywords``);
- ``judge``: ``literal`` (default, LLM-free) or a model spec.

Decisions
- Simulators are sampled at temperature 0 and the evaluated agent at the option
  ``agent_temperature`` (default 1.0), as in incognita.md section 5.
- Naming ``mock/incognita`` anywhere registers that mock first (an explicit call here,
  never an import side effect).
"""

from __future__ import annotations

from typing import Protocol

from confide.core.benchmark import EpisodeContext, SeatSpec
from confide.envs.servicedesk.cards import TaskCard
from confide.envs.servicedesk.conditions import AGENT, CUSTOMER, DeskSeat
from confide.envs.servicedesk.participants.agent_llm import ModelAgent
from confide.envs.servicedesk.participants.customer_llm import ModelCustomer, ModelGateClassifier
from confide.envs.servicedesk.participants.desk_llm import ModelDesk
from confide.envs.servicedesk.participants.judge import LiteralJudge, ModelJudge
from confide.envs.servicedesk.participants.mock import MOCK_NAME, register_incognita_mock
from confide.envs.servicedesk.participants.protocol import (
    AgentAction,
    AgentObservation,
    CustomerAction,
    CustomerObservation,
    DeskAction,
    DeskObservation,
)
from confide.envs.servicedesk.participants.reference import ReferenceAgent
from confide.envs.servicedesk.participants.scripted import ScriptedCustomer, ScriptedDesk
from confide.errors import ConfideError
from confide.llm import ChatModel, GenerateConfig

REFERENCES: tuple[str, ...] = ("reference",)
ROLES: tuple[str, ...] = ("customer", "desk", "gate", "judge")
SCRIPTED = "scripted"
KEYWORDS = "keywords"
LITERAL = "literal"
SIMULATOR_CONFIG = GenerateConfig(temperature=0.0)


class ParticipantError(ConfideError):
    """A seat or role names a participant Incognita does not have."""


class Agent(Protocol):
    name: str

    async def act(self, observation: AgentObservation) -> AgentAction: ...


class Desk(Protocol):
    name: str

    async def act(self, observation: DeskObservation) -> DeskAction: ...


class Customer(Protocol):
    name: str

    async def act(self, observation: CustomerObservation) -> CustomerAction: ...


class GateClassifier(Protocol):
    async def classify(self, text: str, tokens: tuple[str, ...]) -> str | None: ...


def check_roles(roles: dict[str, str]) -> None:
    """Reject unknown role names (a typo must not silently fall back to a default)."""
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        raise ParticipantError(
            f"incognita has no role {unknown[0]!r}; roles: {', '.join(ROLES)}"
        )


def _model(ctx: EpisodeContext, seat: str | None, spec: str, purpose: str) -> ChatModel:
    if spec.split(":", 1)[0] == f"mock/{MOCK_NAME}":
        register_incognita_mock()
    model: ChatModel = ctx.model_for(seat, spec, purpose)
    return model


def _is_model(spec: str) -> bool:
    return "/" in spec


def make_agent(ctx: EpisodeContext, seat: SeatSpec, card: TaskCard, temperature: float,
               max_attempts: int) -> Agent:
    """The evaluated agent for `seat`."""
    if seat.model is not None:
        if seat.strategy is not None:
            raise ParticipantError(
                f"incognita agents have no strategies; got {seat.raw!r} (drop ':{seat.strategy}')"
            )
        config = GenerateConfig(temperature=temperature)
        return ModelAgent(AGENT, _model(ctx, AGENT, seat.model, "act"), config, max_attempts)
    if seat.reference == "reference":
        return ReferenceAgent(AGENT, card)
    raise ParticipantError(
        f"incognita has no participant {seat.raw!r}; use {', '.join(REFERENCES)} or a model spec"
    )


def make_customer(ctx: EpisodeContext, card: TaskCard) -> Customer:
    spec = ctx.roles.get("customer", SCRIPTED)
    if spec == SCRIPTED:
        return ScriptedCustomer(CUSTOMER, card)
    if _is_model(spec):
        return ModelCustomer(CUSTOMER, _model(ctx, CUSTOMER, spec, "act"), SIMULATOR_CONFIG)
    raise ParticipantError(f"role customer={spec!r}: use {SCRIPTED!r} or a model spec")


def make_gate(ctx: EpisodeContext, max_attempts: int) -> GateClassifier | None:
    """The gate's model classifier, or None for the keyword matcher."""
    customer = ctx.roles.get("customer", SCRIPTED)
    spec = ctx.roles.get("gate", customer if _is_model(customer) else KEYWORDS)
    if spec == KEYWORDS:
        return None
    if _is_model(spec):
        model = _model(ctx, CUSTOMER, spec, "gate")
        return ModelGateClassifier(model, SIMULATOR_CONFIG, max_attempts)
    raise ParticipantError(f"role gate={spec!r}: use {KEYWORDS!r} or a model spec")


def make_desk(ctx: EpisodeContext, seat: DeskSeat, max_attempts: int) -> Desk:
    spec = ctx.roles.get("desk", SCRIPTED)
    if spec == SCRIPTED:
        return ScriptedDesk(seat.name, seat.tools)
    if _is_model(spec):
        model = _model(ctx, seat.name, spec, "act")
        return ModelDesk(seat.name, model, SIMULATOR_CONFIG, max_attempts)
    raise ParticipantError(f"role desk={spec!r}: use {SCRIPTED!r} or a model spec")


def make_judge(ctx: EpisodeContext, max_attempts: int) -> LiteralJudge | ModelJudge:
    spec = ctx.roles.get("judge", LITERAL)
    if spec == LITERAL:
        return LiteralJudge()
    if _is_model(spec):
        return ModelJudge(_model(ctx, "judge", spec, "judge"), SIMULATOR_CONFIG, max_attempts)
    raise ParticipantError(f"role judge={spec!r}: use {LITERAL!r} or a model spec")


__all__ = [
    "REFERENCES",
    "ROLES",
    "Agent",
    "Customer",
    "Desk",
    "GateClassifier",
    "ParticipantError",
    "check_roles",
    "make_agent",
    "make_customer",
    "make_desk",
    "make_gate",
    "make_judge",
]
