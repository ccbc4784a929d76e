"""The access conditions: who holds which service tool (the Incognita paper, section 3.2).

The three Incognita conditions keep the same task card, customer, disclosure gate,
termination contract and evaluator; only the holder of each of the fifteen service tools
changes:

- ``direct``: the evaluated agent holds every tool and no service-side participant exists.
- ``indirect``: one declared desk holds every tool (the paper's single intermediary).
- ``social``: six role-isolated desks (account, returns-and-exchanges, catalogue, order
  records, identity lookup, pending-order operations) each hold the tools of their role,
  as `tools.SERVICE_TOOLS` assigns them.

The fourth arm of the paper's Latin square (section 3.2 "Native tau-bench", section 5) is
``native``: the source task run as tau-bench runs it. The agent holds every tool, as under
``direct``, but the customer is tau-bench's user simulator, which holds the whole task
instruction (no disclosure gate), and the episode also ends by tau-bench's rule (the
user's stop signal, or a transfer to a human agent); see `native`. The paper calls it an
external anchor, not a condition: it differs from ``direct`` in several components at
once, so it is listed apart (`INCOGNITA_CONDITIONS` are the three the coordination
reference, the trajectory reader and the failure types are defined for, section 4).

Decisions
- Participant names are ours, not the paper's. The single desk of ``indirect`` is
  ``Lumen``; the six desks of ``social`` are ``Auden, Bryn, Corin, Dara, Emrys, Faye``.
  They are always listed in alphabetical order, and which role each name holds is drawn
  per trial from a seeded shuffle (`build_condition(..., rng)`), so neither the names nor
  their order say who holds what.
- ``calculate`` and ``transfer_to_human_agents`` sit with the desks `tools.py` gives them
  (pending-order operations and account), so in ``social`` every tool has exactly one
  holder.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict

from confide.envs.incognita.tools import SERVICE_TOOLS, Desk
from confide.errors import ConfideError

ConditionName = Literal["direct", "indirect", "social", "native"]
INCOGNITA_CONDITIONS: tuple[ConditionName, ...] = ("direct", "indirect", "social")
"""The three Incognita conditions (section 3.2), in the paper's order."""
NATIVE: Literal["native"] = "native"
"""The native tau-bench arm (the external anchor of section 3.2)."""
CONDITIONS: tuple[ConditionName, ...] = (*INCOGNITA_CONDITIONS, NATIVE)
"""Every arm a run may name (the native arm last, so the order of the three is kept)."""
AGENT_HOLDS_TOOLS: frozenset[str] = frozenset({"direct", NATIVE})
"""The arms in which the evaluated agent holds every service tool itself."""

AGENT = "AGENT"
"""The evaluated agent's participant name."""
CUSTOMER = "USER"
"""The simulated customer's participant name."""
TERMINAL = "ENVIRONMENT"
"""The reserved recipient of the termination signal; it never replies."""

SERVICE_ROLE: Literal["service"] = "service"
"""The role of the single ``indirect`` desk: every service role at once."""
INDIRECT_DESK = "Lumen"
SOCIAL_DESKS: tuple[str, ...] = ("Auden", "Bryn", "Corin", "Dara", "Emrys", "Faye")
ROLE_ORDER: tuple[Desk, ...] = tuple(Desk)
"""The six social roles in a fixed order (the order the shuffle permutes)."""

DeskRole = Desk | Literal["service"]


class ConditionError(ConfideError):
    """An unknown condition name."""


class DeskSeat(BaseModel):
    """One service-side participant: its name, its role and the tools it holds."""

    model_config = ConfigDict(frozen=True)

    name: str
    role: DeskRole
    tools: tuple[str, ...]


class Condition(BaseModel):
    """An access structure: the desks that exist and the holder of every service tool."""

    model_config = ConfigDict(frozen=True)

    name: ConditionName
    desks: tuple[DeskSeat, ...]

    @property
    def owners(self) -> Mapping[str, str]:
        """Tool name -> the participant that holds it."""
        if self.name in AGENT_HOLDS_TOOLS:
            return MappingProxyType(dict.fromkeys(SERVICE_TOOLS, AGENT))
        return MappingProxyType({tool: desk.name for desk in self.desks for tool in desk.tools})

    @property
    def desk_names(self) -> tuple[str, ...]:
        return tuple(desk.name for desk in self.desks)

    @property
    def recipients(self) -> tuple[str, ...]:
        """Whom the evaluated agent may message: the customer, then the desks by name."""
        return (CUSTOMER, *self.desk_names)

    @property
    def participants(self) -> tuple[str, ...]:
        """Everyone registered with the postbox."""
        return (AGENT, CUSTOMER, *self.desk_names)

    def desk(self, name: str) -> DeskSeat:
        for desk in self.desks:
            if desk.name == name:
                return desk
        raise ConditionError(f"condition {self.name} has no desk {name!r}")

    def tools_of(self, participant: str) -> tuple[str, ...]:
        """The tools `participant` holds, in registry order."""
        return tuple(tool for tool, owner in self.owners.items() if owner == participant)

    def role_map(self) -> dict[str, str]:
        """Desk name -> role (for the trace header; never shown to the agent)."""
        return {desk.name: str(desk.role) for desk in self.desks}


def tools_for_role(role: DeskRole) -> tuple[str, ...]:
    """The service tools a role holds (every tool for the ``service`` role)."""
    return tuple(
        name for name, spec in SERVICE_TOOLS.items() if role == SERVICE_ROLE or spec.desk == role
    )


def build_condition(name: str | None, rng: random.Random) -> Condition:
    """The condition called `name`; `rng` draws the social name-to-role assignment."""
    if name == "direct":
        return Condition(name="direct", desks=())
    if name == NATIVE:
        return Condition(name=NATIVE, desks=())
    if name == "indirect":
        seat = DeskSeat(name=INDIRECT_DESK, role=SERVICE_ROLE, tools=tools_for_role(SERVICE_ROLE))
        return Condition(name="indirect", desks=(seat,))
    if name == "social":
        roles = list(ROLE_ORDER)
        rng.shuffle(roles)
        seats = tuple(
            DeskSeat(name=desk, role=role, tools=tools_for_role(role))
            for desk, role in zip(SOCIAL_DESKS, roles, strict=True)
        )
        return Condition(name="social", desks=seats)
    raise ConditionError(f"incognita has no condition {name!r}; available: {', '.join(CONDITIONS)}")

