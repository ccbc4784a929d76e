"""Task cards: what a customer knows and wants, the gold actions, and the final-state check.

Incognita turns each source task into a card that is never shown to the evaluated agent
(the Incognita paper, section 3.1). The card is rendered selectively: the customer's facts sit
behind a disclosure gate that releases one field at a time, when the agent asks for it;
the service side is reached only through the tools' holders. Success is judged by the
final database (section 3.3): replay the gold actions on a fresh copy of the initial
world and compare canonical state hashes; natural-language output assertions, where a
card has them, are for a judge model (not checked here).

Card format (`TaskCard`)
- ``card_id``: stable id, lower-case words joined by ``-`` (our cards: ``sd-NN-<slug>``;
  converted source tasks: ``<source>-<task id>``, `transform`); ``summary``: one line for
  people, never rendered.
- ``user_id``: the customer the card is about.
- ``opening_line``: the customer's first message, the only card text the agent sees at start.
- ``customer_fields``: the customer's facts, each with a release ``token`` from
  `RELEASE_TOKENS` (what the agent must ask for to have it released) and the ``value`` as
  the customer would say it. Exact strings the database must end up with (an address, a
  gift-card number) are stated exactly. A fact with no field is one the customer does not
  know.
- ``requests``: things the customer raises unprompted (the paper's request block, A.2.1).
- ``gold_actions``: the reference solution, reads included, as tool calls in order; a
  call the reference intends to fail carries ``expect_error``. Empty only for a converted
  source task whose success is that nothing changes (our own cards all write).
- ``output_assertions``: statements a judge checks in what the agent told the customer.

Decisions
- A card "engages" the desks that hold the tools of its gold actions (tool -> desk map in
  `tools`); the suite is stratified by that count (section 5, Corpus).
- Gold reads are the ones a careful reference needs to obtain every write argument
  (looking through a customer's orders in listed order until the one meant is found),
  following the golden-trajectory rule of section 4.1.
- `evaluate_final_state` refuses a card whose gold actions do not replay as the card says
  (a gold call failing unexpectedly, or succeeding where failure is intended): a gold state
  that could not be built certifies nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from confide import atomic
from confide.envs.incognita.generator import WorldSpec
from confide.envs.incognita.loaders import load_world, read_json, validate
from confide.envs.incognita.tools import (
    SERVICE_TOOLS,
    TOOL_DESKS,
    Desk,
    ToolCall,
    ToolError,
    ToolKind,
    replay,
)
from confide.envs.incognita.world import World
from confide.errors import ConfideError

SCHEMA_VERSION = 1
DATA_DIR = Path(__file__).parent / "data"
SUITE_FILE = DATA_DIR / "cards.json"

RELEASE_TOKENS: Mapping[str, str] = MappingProxyType(
    {
        "name": "the customer's first and last name",
        "zip": "the zip code of the customer's default address",
        "email": "the customer's email address",
        "order_id": "the identifier of the order or orders concerned",
        "address": "the new address the customer wants used",
        "item": "which items the customer means, and which options they want instead",
        "payment": "which payment method to charge or refund",
        "reason": "why the customer wants to cancel",
    }
)
"""Release tokens and what each one releases."""


class CardError(ConfideError):
    """A card or suite is malformed or does not fit its world."""


class CustomerField(BaseModel):
    """One fact the customer holds, released when the agent asks for `token`."""

    model_config = ConfigDict(extra="forbid")

    token: str
    value: str = Field(min_length=1)

    @field_validator("token")
    @classmethod
    def _known_token(cls, token: str) -> str:
        if token not in RELEASE_TOKENS:
            raise ValueError(f"unknown release token {token!r}; use one of {list(RELEASE_TOKENS)}")
        return token


CARD_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
"""A card id: lowercase letters and digits in words joined by single hyphens (it names
the card's episodes and their trace files)."""


class TaskCard(BaseModel):
    """One task: customer side, gold actions, output assertions (see module docstring)."""

    model_config = ConfigDict(extra="forbid")

    card_id: str = Field(pattern=CARD_ID.pattern)
    summary: str
    user_id: str
    opening_line: str = Field(min_length=1)
    customer_fields: list[CustomerField]
    requests: list[str] = Field(default_factory=list)
    gold_actions: list[ToolCall]
    output_assertions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> TaskCard:
        tokens = [field.token for field in self.customer_fields]
        duplicated = sorted({token for token in tokens if tokens.count(token) > 1})
        if duplicated:
            raise ValueError(f"card {self.card_id}: release tokens repeated: {duplicated}")
        for index, call in enumerate(self.gold_actions):
            spec = SERVICE_TOOLS.get(call.name)
            if spec is None:
                raise ValueError(
                    f"card {self.card_id}: gold_actions[{index}] names unknown tool {call.name!r}"
                )
            try:
                spec.admit(call.arguments)
            except ToolError as error:
                raise ValueError(
                    f"card {self.card_id}: gold_actions[{index}]: {error.message}"
                ) from error
        return self

    @property
    def id(self) -> str:
        """The card id (`confide.core.benchmark.Task`)."""
        return self.card_id

    def field(self, token: str) -> CustomerField | None:
        """The customer field released by `token`, if the customer knows it."""
        return next((field for field in self.customer_fields if field.token == token), None)

    @property
    def desks(self) -> frozenset[Desk]:
        """The desks whose tools the gold actions use."""
        return frozenset(TOOL_DESKS[call.name] for call in self.gold_actions)

    @property
    def writes(self) -> list[ToolCall]:
        """The gold actions that write the database."""
        return [c for c in self.gold_actions if SERVICE_TOOLS[c.name].kind is ToolKind.WRITE]


class CardSuite(BaseModel):
    """A set of cards over one world, with the world's provenance and hash."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    suite_id: str
    description: str
    world_file: str = Field(description="World file name, relative to the suite file.")
    world_seed: int
    world_spec: WorldSpec
    world_hash: str
    cards: list[TaskCard]

    @model_validator(mode="after")
    def _unique_ids(self) -> CardSuite:
        ids = [card.card_id for card in self.cards]
        duplicated = sorted({card_id for card_id in ids if ids.count(card_id) > 1})
        if duplicated:
            raise ValueError(f"card ids repeated: {duplicated}")
        return self

    def card(self, card_id: str) -> TaskCard:
        """The card with this id."""
        for card in self.cards:
            if card.card_id == card_id:
                return card
        raise CardError(f"suite {self.suite_id} has no card {card_id!r}")


def load_suite(path: str | Path = SUITE_FILE) -> tuple[World, CardSuite]:
    """Load a suite and its world, checking that the world is the one the cards fit."""
    path = Path(path)
    data = read_json(path)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise CardError(f"{path}: schema_version is {version!r}; expected {SCHEMA_VERSION}")
    suite = validate(CardSuite, data, str(path))
    world = load_world(path.parent / suite.world_file)
    actual = world.state_hash()
    if actual != suite.world_hash:
        raise CardError(
            f"{path}: world {suite.world_file} has state hash {actual}, "
            f"but the cards were written for {suite.world_hash}"
        )
    for card in suite.cards:
        if card.user_id not in world.users:
            raise CardError(f"{path}: card {card.card_id}: unknown user_id {card.user_id!r}")
    return world, suite


def save_suite(suite: CardSuite, path: str | Path) -> None:
    """Write a suite as indented JSON."""
    text = json.dumps(suite.model_dump(mode="json"), indent=2)
    atomic.write_text(path, text + "\n")


def replay_gold(world0: World, card: TaskCard) -> World:
    """The gold final state: `card`'s gold actions replayed on a fork of `world0`."""
    final = world0.fork()
    outcomes = replay(final, card.gold_actions, SERVICE_TOOLS)
    for index, (call, outcome) in enumerate(zip(card.gold_actions, outcomes, strict=True)):
        failed = isinstance(outcome, ToolError)
        if failed != call.expect_error:
            detail = outcome.message if isinstance(outcome, ToolError) else "it succeeded"
            raise CardError(
                f"card {card.card_id}: gold_actions[{index}] ({call.name}) "
                f"{'failed' if failed else 'was meant to fail'}: {detail}"
            )
    return final


def evaluate_final_state(world0: World, card: TaskCard, final_world: World) -> bool:
    """True when `final_world` equals the gold state of `card` from `world0` (by hash)."""
    return replay_gold(world0, card).state_hash() == final_world.state_hash()
