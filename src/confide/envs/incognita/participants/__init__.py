"""Incognita's participants and how seats and roles bind to them.

The evaluated agent fills the one seat (``agent``) of the lineup: ``reference`` (LLM-free,
knows its card) or a model spec. Simulated parties are bound by role:

- ``customer``: ``scripted`` (default) or a model spec;
- ``user``: the native arm's user simulator (tau-bench's, holding the whole instruction;
  `native_user`): ``scripted`` (default) or a model spec;
- ``desk``: ``scripted`` (default) or a model spec, for every service-side participant of
  the condition (the intermediary of ``indirect`` and the six desks of ``social``);
- ``gate``: the model that names the field a message asks for; default: the customer's
  model when the customer is a model, else the LLM-free keyword matcher (``keywords``);
- ``judge``: ``literal`` (default, LLM-free) or a model spec.

A lineup with a model agent must bind ``customer`` and ``desk`` to models (section 3.2:
they are language-model participants that read prose; ``desk`` only when the run has
``indirect`` or ``social``, the conditions with desks); the preflight refuses it
otherwise, except for the environment's own mocks written for the scripted ones
(`SCRIPTED_PEERS`).

Decisions
- Simulators are sampled at temperature 0 and the evaluated agent at temperature 1, as in
  the Incognita paper, section 5; the experiment's ``sampling`` overrides either per seat or role
  (``experiments/incognita_paper.yaml`` adds the paper's reasoning efforts).
- The environment's mocks, registered first when a seat or role names one (an explicit
  call here, never an import side effect): ``mock/incognita`` (exercises the machinery,
  solves nothing; as a desk or customer it reads prose), ``mock/incognita-skilled`` (a
  DEMO agent of middling skill: fixed, made-up lapse rates per condition, no model's
  measurement), ``mock/incognita-prose`` (never lapses, speaks prose only: needs model
  desks) and ``mock/incognita-ineffective`` (fails every episode at one stage, so every
  failure type occurs offline).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from confide.core.benchmark import EpisodeContext, RoleSpec, SeatSpec
from confide.core.custom import custom_participant
from confide.core.sampling import Sampling
from confide.envs.incognita.actions import (
    Customer,
    Desk,
    GateClassifier,
    Participant,
)
from confide.envs.incognita.conditions import (
    AGENT,
    CUSTOMER,
    INCOGNITA_CONDITIONS,
    NATIVE,
    DeskSeat,
)
from confide.envs.incognita.judge import LiteralJudge, ModelJudge
from confide.envs.incognita.participants.agent_llm import ModelAgent
from confide.envs.incognita.participants.customer_llm import ModelCustomer, ModelGateClassifier
from confide.envs.incognita.participants.desk_llm import ModelDesk
from confide.envs.incognita.participants.mock import MOCK_NAME, register_incognita_mock
from confide.envs.incognita.participants.mock_ineffective import (
    INEFFECTIVE_MOCK_NAME,
    register_ineffective_mock,
)
from confide.envs.incognita.participants.mock_prose import PROSE_MOCK_NAME, register_prose_mock
from confide.envs.incognita.participants.mock_skilled import (
    SKILLED_MOCK_NAME,
    register_skilled_mock,
    unknown_cards,
)
from confide.envs.incognita.participants.native_user import ModelUser, ScriptedUser
from confide.envs.incognita.participants.reference import ReferenceAgent
from confide.envs.incognita.participants.scripted import ScriptedCustomer, ScriptedDesk
from confide.envs.incognita.scenario import TaskCard
from confide.errors import ConfideError
from confide.llm import ChatModel, GenerateConfig

REFERENCES: tuple[str, ...] = ("reference",)
LINEUP_SEAT = "agent"
"""The lineup's one seat (`env.SEAT`), which the `sampling` of seats applies to."""
SCRIPTED = "scripted"
KEYWORDS = "keywords"
LITERAL = "literal"
SAMPLING_DEFAULTS: dict[str, Sampling] = {
    "seats": Sampling(temperature=1.0),
    **{role: Sampling(temperature=0.0) for role in ("customer", "user", "desk", "gate",
                                                    "judge")},
}
"""The sampling every seat and role gets unless the experiment sets its own (the spec's
`sampling_defaults`, shown in the resolved experiment)."""
SIMULATOR_CONFIG = GenerateConfig(**SAMPLING_DEFAULTS["customer"].overrides())
AGENT_CONFIG = GenerateConfig(**SAMPLING_DEFAULTS["seats"].overrides())


class ParticipantError(ConfideError):
    """A seat or role names a participant Incognita does not have."""


# The protocols of the seat and of the roles (`Participant`, `Desk`, `Customer`,
# `GateClassifier`) live in actions.py, as every env's do; this package re-exports them.


OFFLINE: dict[str, str] = {"customer": SCRIPTED, "user": SCRIPTED, "desk": SCRIPTED,
                           "gate": KEYWORDS, "judge": LITERAL}
"""Each role's LLM-free binding (the default, except for the gate; see the docstring)."""

SCRIPTED_PEERS: tuple[str, ...] = (
    f"mock/{MOCK_NAME}", f"mock/{SKILLED_MOCK_NAME}", f"mock/{INEFFECTIVE_MOCK_NAME}",
)
"""The environment's own mock agents: they write their requests as the JSON the scripted
desks read, so a lineup of only these may keep the scripted desks and customer."""

ROLES: tuple[RoleSpec, ...] = (
    RoleSpec("customer", SCRIPTED, "the customer simulator behind the disclosure gate; "
             "the scripted one reads only typed requests", conditions=INCOGNITA_CONDITIONS,
             llm_lineup_needs_binding=True, scripted_peers=SCRIPTED_PEERS),
    RoleSpec("user", SCRIPTED, "the native arm's user simulator, tau-bench's: it holds the "
             "whole task instruction and ends the conversation; the scripted one reads only "
             "typed requests", conditions=(NATIVE,), llm_lineup_needs_binding=True,
             scripted_peers=SCRIPTED_PEERS),
    RoleSpec("desk", SCRIPTED, "every service-side participant: the intermediary of indirect "
             "and the six desks of social; the scripted ones read only JSON requests",
             conditions=("indirect", "social"), llm_lineup_needs_binding=True,
             scripted_peers=SCRIPTED_PEERS),
    RoleSpec("gate", None, "names the field a message asks for (default: the customer's "
             "model when the customer is a model, else keywords)", choices=(KEYWORDS,)),
    RoleSpec("judge", LITERAL, "checks the card's natural-language output assertions; the "
             "literal default matches only digits and ids in a model's prose",
             llm_lineup_needs_binding=True, scripted_peers=SCRIPTED_PEERS, scoring=True),
)
"""The declared roles. The paper's intermediary, desks and customer are language-model
participants that read prose (section 3.2; all use one simulator model, section 5), so a
lineup with a model agent must bind ``desk`` and ``customer`` to models, and ``judge``
(section 5: a fixed natural-language judge; bind ``literal`` explicitly to score by digits
and ids only): the preflight refuses it otherwise. The scripted ones stay for the
reference agent, tests and the environment's own mocks (`SCRIPTED_PEERS`). The
intermediary is not a role of its own: ``desk`` binds it with the six desks, as the paper
runs every service-side participant on the same model. The native arm's user is a role
of its own (``user``), since the paper runs it on another model than the Incognita
customer (section 5: gpt-4.1 against gpt-5.5)."""


def check_roles(roles: dict[str, str]) -> None:
    """Reject unknown roles and bindings (a typo must not silently fall back to a default)."""
    for role, spec in sorted(roles.items()):
        if role not in OFFLINE:
            raise ParticipantError(
                f"incognita has no role {role!r}; roles: {', '.join(OFFLINE)}"
            )
        if spec != OFFLINE[role] and not _is_model(spec):
            raise ParticipantError(
                f"role {role}={spec!r}: use {OFFLINE[role]!r} or a model spec (provider/model)"
            )


def _is_model(spec: str) -> bool:
    return "/" in spec


def _model_spec(ctx: EpisodeContext, role: str, default: str | None = None) -> str | None:
    """The model bound to `role`, or None for its LLM-free participant."""
    spec = ctx.roles.get(role, default or OFFLINE[role])
    return spec if _is_model(spec) else None


_MOCKS: dict[str, Callable[[], None]] = {
    f"mock/{MOCK_NAME}": register_incognita_mock,
    f"mock/{SKILLED_MOCK_NAME}": register_skilled_mock,
    f"mock/{INEFFECTIVE_MOCK_NAME}": register_ineffective_mock,
    f"mock/{PROSE_MOCK_NAME}": register_prose_mock,
}
"""The environment's own mocks, registered when a seat or role names one."""


MOCKS: tuple[tuple[str, str], ...] = (
    (f"mock/{MOCK_NAME}", "exercises every participant's model path; solves nothing"),
    (f"mock/{SKILLED_MOCK_NAME}", "DEMO agent: knows its card, fails at fixed made-up lapse "
     "rates per condition; its numbers measure no model"),
    (f"mock/{PROSE_MOCK_NAME}", "agent that never lapses and speaks prose only (needs model "
     "desks and customer, e.g. mock/incognita)"),
    (f"mock/{INEFFECTIVE_MOCK_NAME}", "agent that fails every episode at one stage of the "
     "chain, so every failure type occurs offline"),
)
"""The environment's mocks and what each is (`confide models list` shows them)."""


CARD_READERS: tuple[str, ...] = (
    f"mock/{SKILLED_MOCK_NAME}", f"mock/{PROSE_MOCK_NAME}", f"mock/{INEFFECTIVE_MOCK_NAME}",
)
"""The mock agents that recognise their card from its opening line: they know only the
shipped cards (`mock_skilled.card_of`)."""


def card_problems(cards: Sequence[TaskCard], seats: Sequence[SeatSpec]) -> list[str]:
    """One problem per card-reading mock in `seats` when some of `cards` are not shipped
    cards (converted tau2 tasks, a suite file of one's own): each of their episodes
    would fail."""
    readers = [seat.model for seat in seats if seat.model in CARD_READERS]
    unknown = unknown_cards(cards) if readers else []
    if not unknown:
        return []
    shown = ", ".join(unknown[:3]) + (", ..." if len(unknown) > 3 else "")
    return [f"seat {model!r} knows only the shipped cards; {len(unknown)} of "
            f"the run's {len(cards)} tasks are not among them ({shown}): run it on the "
            "shipped suite, or put a model or the reference agent in the seat"
            for model in dict.fromkeys(readers)]


def register_mocks(spec: str) -> None:
    """Register the environment's mock named by `spec`, if it names one (the spec's
    `prepare_model` hook, so the preflight can build it too)."""
    register = _MOCKS.get(spec.split(":", 1)[0])
    if register is not None:
        register()


def _model(
    ctx: EpisodeContext, seat: str | None, spec: str, purpose: str, role: str | None = None
) -> ChatModel:
    register_mocks(spec)
    # the agent's calls are labelled AGENT in the trace; its lineup seat is `SEAT`
    lineup_seat = LINEUP_SEAT if seat == AGENT else None
    model: ChatModel = ctx.model_for(seat, spec, purpose, role=role, lineup_seat=lineup_seat)
    return model


def make_agent(
    ctx: EpisodeContext, seat: SeatSpec, card: TaskCard, max_attempts: int
) -> Participant:
    """The evaluated agent for `seat`."""
    if seat.model is not None:
        if seat.strategy is not None:
            raise ParticipantError(
                f"incognita agents have no strategies; got {seat.raw!r} (drop ':{seat.strategy}')"
            )
        model = _model(ctx, AGENT, seat.model, "act")
        return ModelAgent(AGENT, model, AGENT_CONFIG, max_attempts)
    if seat.reference == "reference":
        return ReferenceAgent(AGENT, card)
    custom: Participant | None = custom_participant("incognita", AGENT, seat, ctx)
    if custom is not None:
        return custom
    raise ParticipantError(
        f"incognita has no participant {seat.raw!r}; use {', '.join(REFERENCES)}, a model "
        "spec, py:module:factory or an installed participant plugin"
    )


def make_customer(ctx: EpisodeContext, card: TaskCard) -> Customer:
    spec = _model_spec(ctx, "customer")
    if spec is None:
        return ScriptedCustomer(CUSTOMER, card)
    model = _model(ctx, CUSTOMER, spec, "act", role="customer")
    return ModelCustomer(CUSTOMER, model, SIMULATOR_CONFIG)


def make_user(ctx: EpisodeContext, card: TaskCard) -> Customer:
    """The native arm's user simulator (`native_user`), bound by the ``user`` role."""
    spec = _model_spec(ctx, "user")
    if spec is None:
        return ScriptedUser(CUSTOMER, card)
    model = _model(ctx, CUSTOMER, spec, "act", role="user")
    return ModelUser(CUSTOMER, model, SIMULATOR_CONFIG)


def make_gate(ctx: EpisodeContext, max_attempts: int) -> GateClassifier | None:
    """The gate's model classifier (default: the customer's model), or None for keywords."""
    spec = _model_spec(ctx, "gate", default=ctx.roles.get("customer"))
    if spec is None:
        return None
    role = "gate" if "gate" in ctx.roles else "customer"  # the customer's own model
    model = _model(ctx, CUSTOMER, spec, "gate", role=role)
    return ModelGateClassifier(model, SIMULATOR_CONFIG, max_attempts)


def make_desk(ctx: EpisodeContext, seat: DeskSeat, max_attempts: int) -> Desk:
    spec = _model_spec(ctx, "desk")
    if spec is None:
        return ScriptedDesk(seat.name, seat.tools)
    model = _model(ctx, seat.name, spec, "act", role="desk")
    return ModelDesk(seat.name, model, SIMULATOR_CONFIG, max_attempts)


def make_judge(ctx: EpisodeContext, max_attempts: int) -> LiteralJudge | ModelJudge:
    spec = _model_spec(ctx, "judge")
    if spec is None:
        return LiteralJudge()
    model = _model(ctx, "judge", spec, "judge", role="judge")
    return ModelJudge(model, SIMULATOR_CONFIG, max_attempts)


__all__ = [
    "MOCKS",
    "OFFLINE",
    "REFERENCES",
    "ROLES",
    "Customer",
    "Desk",
    "GateClassifier",
    "Participant",
    "ParticipantError",
    "card_problems",
    "check_roles",
    "make_agent",
    "make_customer",
    "make_desk",
    "make_gate",
    "make_judge",
    "make_user",
    "register_mocks",
]
