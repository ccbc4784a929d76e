"""The judge's view of an episode (section 4.2): utterances with `[R<round>.<seat>]` ids and
visibility annotations, the knowledge ownership table, and every agent's knowledge,
sharing policy and post-interaction goals. Channel and recipients of an utterance come
from the postbox record, never from the judge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from confide.core.message import Message
from confide.envs.sotopia_tom.actions import is_public, utterance_id
from confide.envs.sotopia_tom.scenario import Scenario


class Utterance(BaseModel):
    """One routed message as the judge and the scorer see it."""

    model_config = ConfigDict(frozen=True)

    id: str
    round: int
    seat: int
    speaker: str
    public: bool
    recipients: tuple[str, ...]
    text: str
    payload: dict[str, Any] | None = None

    def reaches(self, agent: str) -> bool:
        """Whether `agent` received this utterance (speakers do not 'receive' their own)."""
        return agent in self.recipients

    @property
    def visibility(self) -> str:
        """`public` or `private to A, B` (section 4.2's annotation)."""
        return "public" if self.public else f"private to {', '.join(self.recipients)}"


def build_transcript(messages: Sequence[Message]) -> list[Utterance]:
    """Utterances in delivery order."""
    return [
        Utterance(
            id=utterance_id(m),
            round=m.round,
            seat=m.turn,
            speaker=m.sender,
            public=is_public(m),
            recipients=m.recipients,
            text=m.text or "",
            payload=m.payload,
        )
        for m in messages
    ]


def render_transcript(utterances: Sequence[Utterance]) -> str:
    """One line per utterance: `[R2.3] Speaker (public): text`."""
    if not utterances:
        return "(nobody said anything)"
    return "\n".join(
        f"[{u.id}] {u.speaker} ({u.visibility}): {' '.join(u.text.split())}" for u in utterances
    )


def render_ownership(scenario: Scenario) -> str:
    """The knowledge ownership table, one item per line."""
    lines = []
    for entry in scenario.ownership_table().values():
        lines.append(
            f"- {entry.fact_id} | {entry.label} | {entry.value} | owner: {entry.owner} | "
            f"{entry.sensitivity.value} | domain: {entry.domain or '-'}"
        )
    return "\n".join(lines)


def render_agents(scenario: Scenario) -> str:
    """Each agent's role, objective, knowledge, sharing policy and goals, by item id."""
    blocks = []
    for seat, agent in enumerate(scenario.agents, start=1):

        def ids(values: Sequence[str]) -> str:
            return ", ".join(values) or "(none)"

        blocks.append(
            "\n".join(
                [
                    f"Seat {seat}: {agent.name} ({agent.role})",
                    f"  objective: {agent.primary_objective}",
                    f"  knows: {ids([f.id for f in agent.knowledge])}",
                    f"  should share: {ids(agent.what_to_share)}",
                    f"  must not share: {ids(agent.what_not_to_share)}",
                    f"  wants to learn: {ids(agent.desired_knowledge)}",
                    f"  must never learn: {ids(agent.cannot_know_knowledge)}",
                ]
            )
        )
    return "\n".join(blocks)


def render_scenario(scenario: Scenario) -> str:
    """Sector, situation and shared goal."""
    sector = scenario.sector.value if scenario.sector is not None else "unspecified"
    return f"Sector: {sector}\n{scenario.description}\nShared goal: {scenario.shared_goal}"
