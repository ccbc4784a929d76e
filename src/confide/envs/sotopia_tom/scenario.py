"""Sotopia-ToM scenario schema, JSON input/output and the public-generator import.

A scenario (the Sotopia-ToM paper, section 3.1, Table 1 and the A.2 schema) is one multi-party
situation: a shared goal, 3-5 agents with a role, a primary objective, pre-interaction
knowledge whose items carry a sensitivity label (public/private), a sharing policy
(what_to_share S_a, what_not_to_share P_a), post-interaction goals (desired_knowledge D_a,
cannot_know_knowledge F_a), and the knowledge domain map M (domain -> role) that says whom
to ask about what. The judge of section 4.2 also needs the knowledge ownership table
derived from M: every item with its owner and sensitivity; `Scenario.ownership_table`
builds it.

Decisions where the paper is silent:

- Items are facts with a stable id (lowercase slug), a short `label` (the paper's key),
  a concrete `value` and an optional `domain` (a key of the domain map). Policy and goal
  lists hold fact ids, never free text, so every later stage (environment, judge,
  metrics) refers to items unambiguously.
- The same fact may be held by several agents: it then appears, with the same id, label,
  value and domain, in each holder's knowledge. Each holder labels its own copy, so the
  sensitivity may differ; the validator reports that, and the ownership table uses the
  stricter label (private).
- `owner_of(fact)` is the holder the domain map points to: the first holder (in agent
  order) whose role M maps the fact's domain to; if M names none of the holders, the
  first holder. With one holder per fact, as in the shipped data, it is simply the holder.
- The schema accepts dangling ids and other rule violations: a scenario is a document
  that may be wrong, and `confide.envs.sotopia_tom.validation` reports every problem with
  scenario, agent and item instead of stopping at the first. Only structural faults that
  make the document meaningless (duplicate agent names or roles, one fact id with two
  different contents) are rejected at load time.
- The domain map's values may be one role or a list of roles (the generator emits both);
  they are stored as tuples.
- At least two agents (the paper's data use 3-5; two keeps the dyadic case of A.8).

Import of the public generator format (`from_generator_record`): the generator's output
names facts by free text, and its policy and goal lists repeat those names loosely ("The
approved travel budget" for the fact "Approved travel budget"). Each reference is matched to
a fact by its text in three levels, stopping at the first level that finds candidates: (1)
the exact label; (2) the same content words (lowercased alphanumeric words without articles,
possessives and short function words); (3) containment: the content words of one side, at
least two of them, all occur in the other. Two words are the same when they are equal or one
is a regular plural of the other (`same_word`: +s, +es, y -> ies, f/fe -> ves), generated
from the singular, never by stripping endings, so "wolves" matches "wolf" but nothing is
reduced to a non-word like "wolve"; irregular or paraphrased names ("Our unit's strong
sales figures" for a fact "Unit's contribution") stay unresolved rather than being
forced onto a fact. Within a level the agent's own facts are searched first for
what_to_share and what_not_to_share, and the other agents' facts first for desired_knowledge
and cannot_know_knowledge, then all facts. A reference that matches nothing, or several
facts at the first level that matches, becomes an `UnresolvedReference` on the scenario,
which the validator reports; it never aborts the import. Scenario ids that repeat within one
generator file (the public one repeats some) are renamed `ID~2`, `ID~3`, ... so a run can
address each, and `read_scenario_records` reports every renaming as a `DuplicateId` for the
validator. Agent names are the roles (the generator has no names), list values are joined
with "; ", and role names in the domain map are matched to agent roles exactly or, failing
that, by their text without a trailing parenthetical ("Lead Engineer" for "Lead Engineer
(Hardware)").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from confide import atomic
from confide.errors import ConfideError
from confide.untrusted import InputError, load_json

SCHEMA_VERSION: Final = 1

FactId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*$")]
ScenarioId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.~-]*$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]


class ScenarioError(ConfideError):
    """A scenario file or record that cannot be read; the message names file, field, value."""


class Sector(StrEnum):
    """The eight industry sectors of the Sotopia-ToM paper, section 3.2 / A.3."""

    HEALTHCARE = "Healthcare"
    TECHNOLOGY = "Software/Technology"
    DEFENSE = "Defense"
    FINANCE = "Finance"
    EDUCATION = "Education"
    ENTERTAINMENT = "Entertainment"
    LEGAL = "Legal"
    MANUFACTURING = "Manufacturing"


class Sensitivity(StrEnum):
    """The sensitivity label sigma(k) of an item (section 3.1)."""

    PUBLIC = "public"
    PRIVATE = "private"


class ItemList(StrEnum):
    """The four per-agent lists that refer to items, named as in the paper's schema."""

    WHAT_TO_SHARE = "what_to_share"
    WHAT_NOT_TO_SHARE = "what_not_to_share"
    DESIRED = "desired_knowledge"
    CANNOT_KNOW = "cannot_know_knowledge"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Fact(_Frozen):
    """One verifiable item of pre-interaction knowledge."""

    id: FactId
    label: NonEmpty = Field(description="Short name of the item, as agents would refer to it.")
    value: str = Field(description="The concrete content (numbers, dates, names).")
    sensitivity: Sensitivity
    domain: str | None = Field(default=None, description="Key of knowledge_domain_map.")


class Agent(_Frozen):
    """One role-playing participant: knowledge, sharing policy and goals (Table 1)."""

    name: NonEmpty = Field(description="Full name; the environment routes messages by it.")
    role: NonEmpty
    primary_objective: NonEmpty
    knowledge: tuple[Fact, ...] = Field(description="Pre-interaction knowledge.")
    what_to_share: tuple[str, ...] = ()
    what_not_to_share: tuple[str, ...] = ()
    desired_knowledge: tuple[str, ...] = ()
    cannot_know_knowledge: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _unique_fact_ids(self) -> Agent:
        seen: set[str] = set()
        for fact in self.knowledge:
            if fact.id in seen:
                raise ValueError(f"agent {self.name!r} holds fact id {fact.id!r} twice")
            seen.add(fact.id)
        return self

    def holds(self, fact_id: str) -> bool:
        """Whether this agent's pre-interaction knowledge contains the fact."""
        return any(fact.id == fact_id for fact in self.knowledge)

    def own_fact(self, fact_id: str) -> Fact | None:
        """This agent's copy of a fact, or None when it does not hold it."""
        return next((fact for fact in self.knowledge if fact.id == fact_id), None)

    def items(self, which: ItemList) -> tuple[str, ...]:
        """One of the four item lists by name."""
        lists: dict[ItemList, tuple[str, ...]] = {
            ItemList.WHAT_TO_SHARE: self.what_to_share,
            ItemList.WHAT_NOT_TO_SHARE: self.what_not_to_share,
            ItemList.DESIRED: self.desired_knowledge,
            ItemList.CANNOT_KNOW: self.cannot_know_knowledge,
        }
        return lists[which]


class UnresolvedReference(_Frozen):
    """A list entry of an imported scenario that could not be matched to one fact."""

    agent: str
    list: ItemList
    text: str
    reason: str


class OwnershipEntry(_Frozen):
    """One row of the knowledge ownership table given to the judge (section 4.2)."""

    fact_id: str
    label: str
    value: str
    holders: tuple[str, ...]
    owner: str
    sensitivity: Sensitivity
    domain: str | None


class Scenario(_Frozen):
    """A Sotopia-ToM scenario (section 3.1, A.2); serialized with `schema_version`."""

    schema_version: Literal[1] = SCHEMA_VERSION
    id: ScenarioId
    sector: Sector | None = None
    description: str = Field(default="", description="The situation, in a few sentences.")
    shared_goal: NonEmpty
    agents: tuple[Agent, ...] = Field(min_length=2)
    knowledge_domain_map: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    unresolved_references: tuple[UnresolvedReference, ...] = ()

    @field_validator("knowledge_domain_map", mode="before")
    @classmethod
    def _roles_as_tuples(cls, value: object) -> object:
        if isinstance(value, Mapping):
            return {k: (v,) if isinstance(v, str) else v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _structure(self) -> Scenario:
        # Names are compared as a reader would (case and outer spaces ignored): messages
        # route by exact name, so "Alex Kim" next to "ALEX KIM" invites misrouting.
        names: dict[str, str] = {}
        for agent in self.agents:
            key = agent.name.strip().casefold()
            if key in names:
                raise ValueError(
                    f"two agents have the name {names[key]!r} and {agent.name!r} "
                    "(names must differ in more than case and spaces)"
                )
            names[key] = agent.name
        roles: set[str] = set()
        for agent in self.agents:
            if agent.role in roles:
                raise ValueError(f"two agents have the role {agent.role!r}")
            roles.add(agent.role)
        first: dict[str, tuple[str, Fact]] = {}
        for agent in self.agents:
            for fact in agent.knowledge:
                if fact.id not in first:
                    first[fact.id] = (agent.name, fact)
                    continue
                other_name, other = first[fact.id]
                for attr in ("label", "value", "domain"):
                    if getattr(fact, attr) != getattr(other, attr):
                        raise ValueError(
                            f"fact id {fact.id!r} has {attr} {getattr(other, attr)!r} for "
                            f"{other_name!r} but {getattr(fact, attr)!r} for {agent.name!r}"
                        )
        return self

    # -- agents -------------------------------------------------------------------------

    @property
    def agent_names(self) -> tuple[str, ...]:
        """Agent names in seat order."""
        return tuple(agent.name for agent in self.agents)

    def agent(self, name: str) -> Agent:
        """The agent with this name; ScenarioError naming the known names otherwise."""
        for agent in self.agents:
            if agent.name == name:
                return agent
        raise ScenarioError(
            f"scenario {self.id!r} has no agent named {name!r}; agents: {list(self.agent_names)}"
        )

    def agent_with_role(self, role: str) -> Agent | None:
        """The agent playing this role, or None."""
        return next((agent for agent in self.agents if agent.role == role), None)

    # -- facts and ownership ------------------------------------------------------------

    @property
    def fact_ids(self) -> tuple[str, ...]:
        """Every fact id held by some agent, in order of first appearance."""
        return tuple(dict.fromkeys(f.id for agent in self.agents for f in agent.knowledge))

    def has_fact(self, fact_id: str) -> bool:
        """Whether some agent holds this fact."""
        return any(agent.holds(fact_id) for agent in self.agents)

    def fact(self, fact_id: str) -> Fact:
        """The fact with this id (the first holder's copy); ScenarioError if nobody holds it."""
        for agent in self.agents:
            own = agent.own_fact(fact_id)
            if own is not None:
                return own
        raise ScenarioError(f"scenario {self.id!r} has no fact with id {fact_id!r}")

    def holders_of(self, fact_id: str) -> tuple[str, ...]:
        """Names of the agents whose pre-interaction knowledge holds the fact, in seat order."""
        return tuple(agent.name for agent in self.agents if agent.holds(fact_id))

    def experts(self, domain: str) -> tuple[str, ...]:
        """Names of the agents whose role the domain map assigns to `domain`."""
        roles = self.knowledge_domain_map.get(domain, ())
        return tuple(agent.name for agent in self.agents if agent.role in roles)

    def owner_of(self, fact_id: str) -> str:
        """The agent to ask for the fact per the domain map (see the module docstring)."""
        holders = self.holders_of(fact_id)
        if not holders:
            raise ScenarioError(f"scenario {self.id!r} has no fact with id {fact_id!r}")
        domain = self.fact(fact_id).domain
        mapped = self.experts(domain) if domain is not None else ()
        return next((name for name in holders if name in mapped), holders[0])

    def sensitivity_of(self, fact_id: str) -> Sensitivity:
        """sigma(k): private if any holder labels it private, else public."""
        holders = self.holders_of(fact_id)
        if not holders:
            raise ScenarioError(f"scenario {self.id!r} has no fact with id {fact_id!r}")
        labels = {self.fact_as_held(name, fact_id).sensitivity for name in holders}
        return Sensitivity.PRIVATE if Sensitivity.PRIVATE in labels else Sensitivity.PUBLIC

    def ownership_table(self) -> dict[str, OwnershipEntry]:
        """Fact id -> owner(s), sensitivity and domain, in order of first appearance."""
        table: dict[str, OwnershipEntry] = {}
        for fact_id in self.fact_ids:
            fact = self.fact(fact_id)
            table[fact_id] = OwnershipEntry(
                fact_id=fact_id,
                label=fact.label,
                value=fact.value,
                holders=self.holders_of(fact_id),
                owner=self.owner_of(fact_id),
                sensitivity=self.sensitivity_of(fact_id),
                domain=fact.domain,
            )
        return table

    def fact_as_held(self, agent: str, fact_id: str) -> Fact:
        """The agent's own copy of a fact (with its sensitivity label); ScenarioError if none."""
        own = self.agent(agent).own_fact(fact_id)
        if own is None:
            raise ScenarioError(
                f"scenario {self.id!r}: agent {agent!r} does not hold fact {fact_id!r}"
            )
        return own

    # -- per-agent policy and goals -------------------------------------------------------

    def items_to_share(self, agent: str) -> tuple[str, ...]:
        """S_a: ids the agent should disclose."""
        return self.agent(agent).what_to_share

    def items_not_to_share(self, agent: str) -> tuple[str, ...]:
        """P_a: ids the agent must withhold."""
        return self.agent(agent).what_not_to_share

    def desired(self, agent: str) -> tuple[str, ...]:
        """D_a: ids the agent should acquire."""
        return self.agent(agent).desired_knowledge

    def forbidden(self, agent: str) -> tuple[str, ...]:
        """F_a: ids the agent must never learn (cannot_know_knowledge)."""
        return self.agent(agent).cannot_know_knowledge

    def wanted_by(self, fact_id: str) -> tuple[str, ...]:
        """Names of the agents whose desired_knowledge lists the fact, in seat order."""
        return tuple(a.name for a in self.agents if fact_id in a.desired_knowledge)

    def forbidden_to(self, fact_id: str) -> tuple[str, ...]:
        """Names of the agents whose cannot_know_knowledge lists the fact, in seat order."""
        return tuple(a.name for a in self.agents if fact_id in a.cannot_know_knowledge)


# -- native JSON ---------------------------------------------------------------------------


def scenario_to_json(scenario: Scenario) -> str:
    """The scenario as indented JSON (the native, versioned format)."""
    return scenario.model_dump_json(indent=2) + "\n"


def save_scenario(scenario: Scenario, path: str | Path) -> None:
    """Write one scenario to `path` as native JSON."""
    atomic.write_text(path, scenario_to_json(scenario))


def parse_scenario(record: Mapping[str, Any], *, where: str = "<record>") -> Scenario:
    """Build a Scenario from one decoded JSON object in either supported format.

    An object with `schema_version` is native; one with `scenario_goal` and `agents` is the
    public generator's format; anything else is a ScenarioError naming `where`.
    """
    if "schema_version" in record:
        version = record["schema_version"]
        if version != SCHEMA_VERSION:
            raise ScenarioError(
                f"{where}: field 'schema_version': unsupported value {version!r} "
                f"(this version of confide reads {SCHEMA_VERSION})"
            )
        try:
            return Scenario.model_validate(record)
        except ValidationError as exc:
            raise ScenarioError(f"{where}: {_describe(exc)}") from exc
    if "scenario_goal" in record and "agents" in record:
        return from_generator_record(record, where=where)
    raise ScenarioError(
        f"{where}: not a scenario: expected a 'schema_version' field (native format) or "
        f"'scenario_goal' and 'agents' (generator format); got keys {sorted(record)}"
    )


class DuplicateId(_Frozen):
    """A generator-format scenario whose id an earlier record of the same file already used."""

    index: int = Field(description="Position of the record in the file (0-based).")
    original_id: str
    renamed_to: str


def read_scenario_file(path: str | Path) -> list[Scenario]:
    """All scenarios in a JSON file holding one scenario object or a list of them.

    Generator-format scenarios whose ids repeat within the file get `~2`, `~3`, ... appended
    to later occurrences so every scenario in a file has a distinct id.
    """
    return read_scenario_records(path)[0]


def read_scenario_records(path: str | Path) -> tuple[list[Scenario], list[DuplicateId]]:
    """`read_scenario_file`, plus every renamed repeated id (reported by the validator)."""
    path = Path(path)
    try:
        data = load_json(path, "scenario file")
    except InputError as exc:
        raise ScenarioError(str(exc)) from None
    if data == []:
        raise ScenarioError(f"{path}: the file holds an empty list; expected one or more scenarios")
    records: list[object] = data if isinstance(data, list) else [data]
    scenarios: list[Scenario] = []
    duplicates: list[DuplicateId] = []
    seen: dict[str, int] = {}
    for index, record in enumerate(records):
        where = f"{path}: scenario #{index}" if isinstance(data, list) else str(path)
        if not isinstance(record, dict):
            raise ScenarioError(f"{where}: expected a JSON object, got {type(record).__name__}")
        scenario = parse_scenario(record, where=where)
        count = seen.get(scenario.id, 0) + 1
        seen[scenario.id] = count
        if count > 1 and "schema_version" not in record:
            renamed = f"{scenario.id}~{count}"
            duplicates.append(DuplicateId(index=index, original_id=scenario.id, renamed_to=renamed))
            scenario = scenario.model_copy(update={"id": renamed})
        scenarios.append(scenario)
    return scenarios, duplicates


def load_scenario(path: str | Path) -> Scenario:
    """The single scenario stored in `path`; ScenarioError if the file holds another count."""
    scenarios = read_scenario_file(path)
    if len(scenarios) != 1:
        raise ScenarioError(f"{path}: expected one scenario, found {len(scenarios)}")
    return scenarios[0]


def _describe(exc: ValidationError) -> str:
    """The first few pydantic errors as `field 'a.0.b': value 'x': what is wrong`."""
    parts = []
    for error in exc.errors()[:5]:
        loc = ".".join(str(part) for part in error["loc"])
        if not loc:
            parts.append(error["msg"])
            continue
        value = error.get("input")
        shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
        parts.append(f"field {loc!r}: value {shown[:80]}: {error['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more errors)" if more > 0 else "")


# -- public generator format ------------------------------------------------------------------


class _GenFact(BaseModel):
    value: str | int | float | list[Any]
    sensitivity: Sensitivity


class _GenPolicy(BaseModel):
    what_to_share: list[str] = Field(default_factory=list)
    what_not_to_share: list[str] = Field(default_factory=list)


class _GenGoals(BaseModel):
    primary_objective: str
    sharing_policy: _GenPolicy


class _GenPost(BaseModel):
    desired_knowledge: list[str] = Field(default_factory=list)
    cannot_know_knowledge: list[str] = Field(default_factory=list)


class _GenAgent(BaseModel):
    role: str
    pre_interaction_knowledge: dict[str, _GenFact]
    post_interaction_knowledge: _GenPost
    goals: _GenGoals


class _GenScenario(BaseModel):
    scenario_id: int | str
    scenario_goal: str
    knowledge_domain_map: dict[str, str | list[str]] = Field(default_factory=dict)
    agents: list[_GenAgent]


_STOPWORDS: Final = frozenset(
    "a an the my our your their his her its this that these those of for to in on at by with "  # noqa: SIM905
    "from and or s".split()
)


def content_words(text: str) -> frozenset[str]:
    """Lowercased alphanumeric words of `text` without stopwords, never stemmed.

    The normalization used to match free-text item references to facts (module docstring)
    and, in validation, to compare an objective with an item's value; compare words with
    `same_word`, sets with `words_within`.
    """
    words = re.findall(r"[a-z0-9]+", text.lower().replace("&", " and "))
    return frozenset(word for word in words if word not in _STOPWORDS)


def _plurals(word: str) -> set[str]:
    """The regular plurals of `word` read as a singular (+s, +es, y -> ies, f/fe -> ves)."""
    forms = {word + "s", word + "es"}
    if len(word) > 2 and word.endswith("y") and word[-2] not in "aeiou":
        forms.add(word[:-1] + "ies")
    if word.endswith("f"):
        forms.add(word[:-1] + "ves")
    if word.endswith("fe"):
        forms.add(word[:-2] + "ves")
    return forms


def same_word(a: str, b: str) -> bool:
    """Equal, or one is a regular plural of the other ("wolf"/"wolves", "policy"/"policies")."""
    if a == b:
        return True
    return not a.isdigit() and not b.isdigit() and (a in _plurals(b) or b in _plurals(a))


def words_within(small: Iterable[str], large: Iterable[str]) -> bool:
    """Every word of `small` is the `same_word` as some word of `large`."""
    pool = list(large)
    return all(any(same_word(word, other) for other in pool) for word in small)


def _slug(text: str) -> str:
    slug = "-".join(re.findall(r"[a-z0-9]+", text.lower()))
    return slug or "item"


def _value_text(value: str | int | float | list[Any]) -> str:
    if isinstance(value, list):
        return "; ".join(str(part) for part in value)
    return str(value)


class _Candidate:
    """A generator fact: who holds it, its text and the id it received."""

    def __init__(self, holder: str, label: str, fact_id: str) -> None:
        self.holder = holder
        self.label = label
        self.fact_id = fact_id
        self.words = content_words(label)


def _match(text: str, scopes: Sequence[Sequence[_Candidate]]) -> str | list[str]:
    """The fact id `text` refers to, or the list of ambiguous candidate ids (maybe empty)."""
    words = content_words(text)

    def exact(c: _Candidate) -> bool:
        return c.label == text

    def same_words(c: _Candidate) -> bool:
        return bool(words) and words_within(words, c.words) and words_within(c.words, words)

    def contained(c: _Candidate) -> bool:
        small, large = (c.words, words) if len(c.words) <= len(words) else (words, c.words)
        return len(small) >= 2 and words_within(small, large)

    for level in (exact, same_words, contained):
        for scope in scopes:
            ids = list(dict.fromkeys(c.fact_id for c in scope if level(c)))
            if len(ids) == 1:
                return ids[0]
            if ids:
                return ids
    return []


def from_generator_record(
    record: Mapping[str, Any], *, sector: Sector | None = None, where: str = "<record>"
) -> Scenario:
    """Convert one scenario of the paper's public generator format into a Scenario.

    References are matched to facts by text as described in the module docstring; the
    ones that match no single fact are kept in `unresolved_references`.
    """
    try:
        return _convert(_GenScenario.model_validate(record), sector)
    except ValidationError as exc:
        raise ScenarioError(f"{where}: generator format: {_describe(exc)}") from exc


def _convert(gen: _GenScenario, sector: Sector | None) -> Scenario:
    candidates, facts = _generator_facts(gen)
    unresolved: list[UnresolvedReference] = []
    agents: list[Agent] = []
    for gen_agent, knowledge in zip(gen.agents, facts, strict=True):
        own = [c for c in candidates if c.holder == gen_agent.role]
        others = [c for c in candidates if c.holder != gen_agent.role]
        policy = gen_agent.goals.sharing_policy
        post = gen_agent.post_interaction_knowledge
        lists: dict[ItemList, list[str]] = {
            ItemList.WHAT_TO_SHARE: policy.what_to_share,
            ItemList.WHAT_NOT_TO_SHARE: policy.what_not_to_share,
            ItemList.DESIRED: post.desired_knowledge,
            ItemList.CANNOT_KNOW: post.cannot_know_knowledge,
        }
        resolved: dict[ItemList, tuple[str, ...]] = {}
        for which, texts in lists.items():
            own_first = which in (ItemList.WHAT_TO_SHARE, ItemList.WHAT_NOT_TO_SHARE)
            scopes = (own, candidates) if own_first else (others, candidates)
            ids: list[str] = []
            for text in texts:
                found = _match(text, scopes)
                if isinstance(found, str):
                    ids.append(found)
                    continue
                reason = (
                    f"matches several facts: {', '.join(found)}" if found else "no fact matches"
                )
                unresolved.append(
                    UnresolvedReference(agent=gen_agent.role, list=which, text=text, reason=reason)
                )
            resolved[which] = tuple(ids)
        agents.append(
            Agent(
                name=gen_agent.role,
                role=gen_agent.role,
                primary_objective=gen_agent.goals.primary_objective,
                knowledge=tuple(knowledge),
                what_to_share=resolved[ItemList.WHAT_TO_SHARE],
                what_not_to_share=resolved[ItemList.WHAT_NOT_TO_SHARE],
                desired_knowledge=resolved[ItemList.DESIRED],
                cannot_know_knowledge=resolved[ItemList.CANNOT_KNOW],
            )
        )
    roles = [a.role for a in gen.agents]
    domain_map = {
        domain: tuple(_match_role(r, roles) for r in ([v] if isinstance(v, str) else v))
        for domain, v in gen.knowledge_domain_map.items()
    }
    return Scenario(
        id=str(gen.scenario_id),
        sector=sector,
        shared_goal=gen.scenario_goal,
        agents=tuple(agents),
        knowledge_domain_map=domain_map,
        unresolved_references=tuple(unresolved),
    )


def _generator_facts(gen: _GenScenario) -> tuple[list[_Candidate], list[list[Fact]]]:
    """Facts per agent with ids: equal label and value -> one shared fact, else a new id."""
    by_content: dict[tuple[str, str], str] = {}
    used: set[str] = set()
    candidates: list[_Candidate] = []
    per_agent: list[list[Fact]] = []
    for gen_agent in gen.agents:
        knowledge: list[Fact] = []
        for label, gen_fact in gen_agent.pre_interaction_knowledge.items():
            value = _value_text(gen_fact.value)
            fact_id = by_content.get((label, value))
            if fact_id is None:
                base = _slug(label)
                fact_id, n = base, 1
                while fact_id in used:
                    n += 1
                    fact_id = f"{base}-{n}"
                used.add(fact_id)
                by_content[(label, value)] = fact_id
            knowledge.append(
                Fact(id=fact_id, label=label, value=value, sensitivity=gen_fact.sensitivity)
            )
            candidates.append(_Candidate(gen_agent.role, label, fact_id))
        per_agent.append(knowledge)
    return candidates, per_agent


def _match_role(role: str, roles: Iterable[str]) -> str:
    """The agent role `role` names: exact, else equal once parentheticals are removed."""
    roles = list(roles)
    if role in roles:
        return role

    def bare(text: str) -> str:
        return re.sub(r"\s*\([^)]*\)\s*$", "", text).strip().lower()

    matches = [r for r in roles if bare(r) == bare(role)]
    return matches[0] if len(matches) == 1 else role
