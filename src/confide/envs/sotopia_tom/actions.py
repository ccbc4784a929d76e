"""Actions, typed payloads and observations of the Sotopia-ToM environment (section 5.1, A.8).

An agent's turn produces one `InfoAction`: `speak` (with `to` empty for a public message
to everyone, or naming recipients for a direct message), `none`, or `leave`. Language
agents fill `text`; reference participants also attach a typed payload (`Disclose` or
`Ask`) carrying fact ids, which the deterministic reference judge reads.

The observation an agent receives is built only from its own card (`Briefing`) and the
messages the postbox delivered to it (`history`). The briefing holds what section 5.3
gives every agent -- role, primary objective, pre-interaction knowledge with sensitivity
labels, sharing policy (S_a, P_a), knowledge domain map -- plus the roster of
participants (names and roles, needed to address anyone) and `goals`, the typed form of
the agent's desired items (id, label, domain, sensitivity; never the value). Decision:
LLM prompts do not render `goals`: section 6.1 states that agents must infer what to ask
from the high-level objective alone, and inquiry alignment measures exactly that; the
typed goal card exists so reference protocols can ask by fact id. cannot_know items (F_a)
are never shown to the agent.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from confide.core.message import Message
from confide.envs.sotopia_tom.scenario import Scenario, Sensitivity

ActionType = Literal["speak", "none", "leave"]


class InfoAction(BaseModel):
    """One turn's action (A.8): speak (public if `to` is empty), none, or leave."""

    model_config = ConfigDict(frozen=True)

    action_type: ActionType
    to: tuple[str, ...] = ()
    text: str = ""
    payload: dict[str, Any] | None = None

    @property
    def substantive(self) -> bool:
        """A speak act with content; anything else counts towards the stale-round stop."""
        return self.action_type == "speak" and bool(self.text.strip() or self.payload)

    @classmethod
    def none(cls) -> InfoAction:
        return cls(action_type="none")


class Disclose(BaseModel):
    """Typed payload: the message communicates the content of these facts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["disclose"] = "disclose"
    facts: tuple[str, ...] = Field(min_length=1)


class Ask(BaseModel):
    """Typed payload: a deliberate request for these facts. `addressee` names whom a
    public request is directed at (a direct message is directed at its recipients)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["ask"] = "ask"
    facts: tuple[str, ...] = Field(min_length=1)
    addressee: tuple[str, ...] = ()


Payload = Annotated[Disclose | Ask, Field(discriminator="type")]
_PAYLOAD: TypeAdapter[Disclose | Ask] = TypeAdapter(Payload)


def parse_payload(payload: dict[str, Any] | None) -> Disclose | Ask | None:
    """The typed payload of a message, or None when it has none or an unknown one."""
    if payload is None:
        return None
    try:
        return _PAYLOAD.validate_python(payload)
    except ValidationError:
        return None


class FactCard(BaseModel):
    """One item of the agent's own pre-interaction knowledge."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: str
    value: str
    sensitivity: Sensitivity
    domain: str | None = None


class GoalItem(BaseModel):
    """One desired item, without its value (the agent has to acquire that)."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: str
    domain: str | None
    sensitivity: Sensitivity


class Member(BaseModel):
    """A participant as everyone knows them: name and role."""

    model_config = ConfigDict(frozen=True)

    name: str
    role: str


class Briefing(BaseModel):
    """The agent's own card: what it knows and may share before the conversation."""

    model_config = ConfigDict(frozen=True)

    scenario_id: str
    sector: str | None
    description: str
    shared_goal: str
    name: str
    role: str
    primary_objective: str
    knowledge: tuple[FactCard, ...]
    share: tuple[str, ...] = Field(description="S_a: ids of own items to disclose.")
    withhold: tuple[str, ...] = Field(description="P_a: ids of own items never to disclose.")
    goals: tuple[GoalItem, ...] = Field(description="D_a, typed (see the module docstring).")
    members: tuple[Member, ...]
    domain_map: dict[str, tuple[str, ...]]

    def fact(self, fact_id: str) -> FactCard:
        """One of the agent's own facts by id."""
        for card in self.knowledge:
            if card.id == fact_id:
                return card
        raise KeyError(f"{self.name} holds no fact {fact_id!r}")

    def experts(self, domain: str | None) -> tuple[str, ...]:
        """Names of the participants the domain map assigns to `domain`, in seat order."""
        roles = self.domain_map.get(domain, ()) if domain is not None else ()
        return tuple(m.name for m in self.members if m.role in roles)


class TurnLimits(BaseModel):
    """The conversation's resolved limits (section 5.3), shown to agents exactly as the
    environment enforces them."""

    model_config = ConfigDict(frozen=True)

    max_turns: int = Field(ge=2, description="T_max: agent turns in the whole conversation.")
    stale_turns: int = Field(ge=1, description="Non-substantive turns in a row that end it.")
    leave_ends: Literal["any", "all"] = Field(
        description="'any': the first agent to leave ends it; 'all': when nobody is left."
    )


class InfoObservation(BaseModel):
    """What one agent is shown at the start of its turn."""

    agent: str
    round: int = Field(ge=1)
    turn: int = Field(ge=1, description="1-based index of this turn in the conversation.")
    limits: TurnLimits
    briefing: Briefing
    history: list[Message] = Field(description="Every message this agent sent or received.")
    first_new: int = Field(ge=0, description="history[first_new:] arrived since its last turn.")
    present: tuple[str, ...] = Field(description="Agents still in the conversation.")
    feedback: str | None = Field(default=None, description="Why the previous try was refused.")

    @property
    def new_messages(self) -> list[Message]:
        return self.history[self.first_new :]


def briefing_for(scenario: Scenario, name: str) -> Briefing:
    """The card of agent `name` (only its own facts and policy; see the module docstring)."""
    agent = scenario.agent(name)
    goals = tuple(
        GoalItem(
            id=ref,
            label=scenario.fact(ref).label,
            domain=scenario.fact(ref).domain,
            sensitivity=scenario.sensitivity_of(ref),
        )
        for ref in agent.desired_knowledge
        if scenario.has_fact(ref)
    )
    return Briefing(
        scenario_id=scenario.id,
        sector=scenario.sector.value if scenario.sector is not None else None,
        description=scenario.description,
        shared_goal=scenario.shared_goal,
        name=agent.name,
        role=agent.role,
        primary_objective=agent.primary_objective,
        knowledge=tuple(
            FactCard(
                id=f.id, label=f.label, value=f.value, sensitivity=f.sensitivity, domain=f.domain
            )
            for f in agent.knowledge
        ),
        share=agent.what_to_share,
        withhold=agent.what_not_to_share,
        goals=goals,
        members=tuple(Member(name=a.name, role=a.role) for a in scenario.agents),
        domain_map=dict(scenario.knowledge_domain_map),
    )


def utterance_id(message: Message) -> str:
    """`R<round>.<seat>`: the round and the speaker's 1-based seat (section 4.2)."""
    return f"R{message.round}.{message.turn}"


def is_public(message: Message) -> bool:
    """Whether the message went to the public channel (a broadcast)."""
    return message.channel.kind == "broadcast"


class Participant(Protocol):
    """Any seat of this environment: one action per observation."""

    name: str

    async def act(self, observation: InfoObservation) -> InfoAction: ...
