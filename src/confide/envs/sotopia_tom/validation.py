"""Rule validation of Sotopia-ToM scenarios (the Sotopia-ToM paper §A.4 judge checks, A.5 review
rules).

Every check is deterministic and reports each finding as a `Violation` (rule, scenario id,
agent, item, message); nothing stops at the first problem. Findings are of two kinds,
counted separately (`Rule.is_import`):

- import problems: the document does not say which fact an entry means, so no rule can be
  evaluated on it. `unresolved_name`: a free-text entry of an imported generator scenario
  that matches no single fact (`scenario.py` explains the conservative matching);
  `duplicate_id`: a scenario id
  used earlier in the same generator file (renamed `ID~n` on import) or in another file.
- rule violations: a rule of A.4/A.5 that is certainly broken. Certain means it holds for
  every reading of the unresolved entries: a claim that an agent does not list an item in
  a list (what_to_share for goal_shareability, what_not_to_share for
  cannot_know_unreachable) is only made when that agent's list has no unresolved entry,
  since the entry may name the item (a holder that withholds "the private
  grievances" may well withhold the one grievance that another agent cannot know).

The rules:

- objective_leakage (A.5.1): an agent's primary_objective must not already state an item
  of its own desired_knowledge. Deterministic reading of "states": every number in the
  item's value recurs in the text next to the same neighbouring word as in the value (so
  "4.1 mmol", "ward 6" and "12 may" must recur, while a bare "2025" or "10" elsewhere does
  not count; a value that is only a number must recur as that number), or the text
  contains every content word of a value that has at least three of them. The same
  reasoning ("the agent has no reason to seek it") applies to the scenario description and
  shared goal, which every agent reads, so they are checked too.
- sensitivity_consistency (A.5.2): every what_not_to_share item is in the agent's own
  knowledge and labelled private there; holders of one fact agree on its label.
- goal_sourcing (A.4 (i)): every desired item is held by another agent (and not already
  by the agent itself).
- goal_shareability (A.4 (ii), A.5.3): some other holder lists it in what_to_share and not
  in what_not_to_share.
- domain_map (A.5.4, "each entry in knowledge_domain_map must point to a role whose
  pre_interaction_knowledge actually contains expertise in that domain"): every role in
  knowledge_domain_map is an agent's role; when facts carry domains, a mapped role holds at
  least one fact of the domain, every fact's domain is in the map, and a desired item's
  domain maps to an agent that holds it (so "ask the owner per M", which inquiry alignment
  scores, is possible). Where the data does not allow it: facts without a domain (the public
  generator format has none; its domain keys such as "pricing_data" are identifiers that name
  no fact) cannot be checked for expertise, so A.5.4 reduces there to "the mapped role
  exists" and "the holder of a desired item is named somewhere in the map";
  `expertise_checkable` says which scenarios these are and `confide scenarios validate`
  prints their count.
- policy_consistency (A.4 "internal consistency of the sharing policy"): no item both in
  what_to_share and what_not_to_share, or both desired and cannot_know; what_to_share only
  lists the agent's own items; no list names an item twice.
- cannot_know_unreachable (A.4): a cannot_know item is held by other agents only, each of
  them labels it private and lists it in what_not_to_share, so no policy-following agent
  ever discloses it; neither the agent's own objective nor the shared description and goal
  states it.

An unknown id in a native-format list is exact, hence certain: it is reported under the
rule its list belongs to (what_to_share -> policy_consistency, what_not_to_share ->
sensitivity_consistency, desired_knowledge -> goal_sourcing, as the item has no origin,
cannot_know_knowledge -> cannot_know_unreachable). Otherwise rules skip entries that name
no fact.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from confide.envs.sotopia_tom.scenario import (
    Agent,
    ItemList,
    Scenario,
    ScenarioError,
    Sensitivity,
    content_words,
    read_scenario_records,
    words_within,
)


class Rule(StrEnum):
    """Import problems, then validation rules, in the order their findings are reported."""

    DUPLICATE_ID = "duplicate_id"
    UNRESOLVED_NAME = "unresolved_name"
    OBJECTIVE_LEAKAGE = "objective_leakage"
    SENSITIVITY_CONSISTENCY = "sensitivity_consistency"
    GOAL_SOURCING = "goal_sourcing"
    GOAL_SHAREABILITY = "goal_shareability"
    DOMAIN_MAP = "domain_map"
    POLICY_CONSISTENCY = "policy_consistency"
    CANNOT_KNOW_UNREACHABLE = "cannot_know_unreachable"
    STOP_RULE_REACHABILITY = "stop_rule_reachability"
    """Checked by `reachability` (it plays the scenario), after every rule above."""

    @property
    def is_import(self) -> bool:
        """An import problem (no rule could be evaluated), not a rule violation."""
        return self in _IMPORT_RULES


_IMPORT_RULES: Final = frozenset({Rule.DUPLICATE_ID, Rule.UNRESOLVED_NAME})


_LIST_RULE: Final = {
    ItemList.WHAT_TO_SHARE: Rule.POLICY_CONSISTENCY,
    ItemList.WHAT_NOT_TO_SHARE: Rule.SENSITIVITY_CONSISTENCY,
    ItemList.DESIRED: Rule.GOAL_SOURCING,
    ItemList.CANNOT_KNOW: Rule.CANNOT_KNOW_UNREACHABLE,
}


class Violation(BaseModel):
    """One broken rule: where (scenario, agent, item) and what, in one sentence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: Rule
    scenario_id: str
    agent: str | None
    item: str | None
    message: str

    def render(self) -> str:
        """`[rule] scenario S, agent A, item I: message` (agent/item omitted when None)."""
        where = [f"scenario {self.scenario_id}"]
        if self.agent is not None:
            where.append(f"agent {self.agent}")
        if self.item is not None:
            where.append(f"item {self.item}")
        return f"[{self.rule}] {', '.join(where)}: {self.message}"


class FileReport(BaseModel):
    """The outcome for one file: its scenarios' findings, or why it could not be read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    scenario_ids: tuple[str, ...] = ()
    violations: tuple[Violation, ...] = ()
    expertise_unchecked: tuple[str, ...] = Field(
        default=(), description="Scenarios whose facts carry no domain (A.5.4 not checkable)."
    )
    error: str | None = None

    @property
    def import_problems(self) -> tuple[Violation, ...]:
        """Findings that say an entry or id could not be read as meant."""
        return tuple(v for v in self.violations if v.rule.is_import)

    @property
    def rule_violations(self) -> tuple[Violation, ...]:
        """Findings that say an A.4/A.5 rule is certainly broken."""
        return tuple(v for v in self.violations if not v.rule.is_import)


class ScenarioValidationError(ScenarioError):
    """Raised by `ensure_valid` for a scenario that breaks rules; lists every violation."""


_TOKEN: Final = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_]+")

_Found = Iterator[tuple[str | None, str | None, str]]


def validate_scenario(scenario: Scenario) -> list[Violation]:
    """Every import problem and rule violation of one scenario, grouped in `Rule` order."""
    checks: list[tuple[Rule, Callable[[Scenario], _Found]]] = [
        (Rule.OBJECTIVE_LEAKAGE, _objective_leakage),
        (Rule.SENSITIVITY_CONSISTENCY, _sensitivity_consistency),
        (Rule.GOAL_SOURCING, _goal_sourcing),
        (Rule.GOAL_SHAREABILITY, _goal_shareability),
        (Rule.DOMAIN_MAP, _domain_map),
        (Rule.POLICY_CONSISTENCY, _policy_consistency),
        (Rule.CANNOT_KNOW_UNREACHABLE, _cannot_know_unreachable),
    ]
    found = [(rule, f) for rule, check in checks for f in check(scenario)]
    found += _unknown_references(scenario)
    order = list(Rule)
    found.sort(key=lambda pair: order.index(pair[0]))  # stable: check order within a rule
    return [
        Violation(rule=rule, scenario_id=scenario.id, agent=a, item=i, message=msg)
        for rule, (a, i, msg) in found
    ]


def expertise_checkable(scenario: Scenario) -> bool:
    """Whether A.5.4's "expertise in that domain" can be checked: some fact has a domain."""
    return any(f.domain is not None for a in scenario.agents for f in a.knowledge)


def ensure_valid(scenario: Scenario) -> Scenario:
    """The scenario itself if it breaks no rule; ScenarioValidationError listing all else."""
    violations = validate_scenario(scenario)
    if violations:
        lines = "\n".join(f"  {v.render()}" for v in violations)
        raise ScenarioValidationError(
            f"scenario {scenario.id!r} breaks {len(violations)} rule(s):\n{lines}"
        )
    return scenario


def validate_files(paths: Iterable[str | Path]) -> list[FileReport]:
    """Read and validate every scenario in every file; unreadable files carry an error."""
    reports: list[FileReport] = []
    first_seen: dict[str, str] = {}
    for path in paths:
        try:
            scenarios, duplicates = read_scenario_records(path)
        except ScenarioError as exc:
            reports.append(FileReport(path=str(path), error=str(exc)))
            continue
        renamed = {d.renamed_to: d for d in duplicates}
        violations: list[Violation] = []
        for scenario in scenarios:
            if scenario.id in renamed:
                dup = renamed[scenario.id]
                violations.append(
                    Violation(
                        rule=Rule.DUPLICATE_ID,
                        scenario_id=scenario.id,
                        agent=None,
                        item=None,
                        message=f"record #{dup.index} repeats scenario id {dup.original_id!r} "
                        f"of an earlier record in this file; imported as {dup.renamed_to!r}",
                    )
                )
            elif scenario.id in first_seen:
                violations.append(
                    Violation(
                        rule=Rule.DUPLICATE_ID,
                        scenario_id=scenario.id,
                        agent=None,
                        item=None,
                        message=f"scenario id already used in {first_seen[scenario.id]}",
                    )
                )
            else:
                first_seen[scenario.id] = str(path)
            violations += validate_scenario(scenario)
        reports.append(
            FileReport(
                path=str(path),
                scenario_ids=tuple(s.id for s in scenarios),
                violations=tuple(violations),
                expertise_unchecked=tuple(
                    s.id for s in scenarios if not expertise_checkable(s)
                ),
            )
        )
    return reports


# -- rules -------------------------------------------------------------------------------------


def _unknown_references(scenario: Scenario) -> Iterator[tuple[Rule, tuple[str, str, str]]]:
    """List entries that name no fact: unknown ids and unresolved imported references."""
    for agent in scenario.agents:
        for which in ItemList:
            for ref in dict.fromkeys(agent.items(which)):
                if not scenario.has_fact(ref):
                    yield _LIST_RULE[which], (agent.name, ref, _no_fact(which, ref, "unknown id"))
    for unresolved in scenario.unresolved_references:
        msg = _no_fact(unresolved.list, unresolved.text, unresolved.reason)
        yield Rule.UNRESOLVED_NAME, (unresolved.agent, unresolved.text, msg)


def _has_unresolved(scenario: Scenario, agent: str, which: ItemList) -> bool:
    """Whether an entry of `agent`'s list `which` is unresolved (it may name any fact)."""
    return any(u.agent == agent and u.list is which for u in scenario.unresolved_references)


def _no_fact(which: ItemList, ref: str, reason: str) -> str:
    return f"{which} item {ref!r} matches no single fact in the scenario ({reason})"


def _known(scenario: Scenario, agent: Agent, which: ItemList) -> list[str]:
    """The entries of one list that name facts, without repeats."""
    return [ref for ref in dict.fromkeys(agent.items(which)) if scenario.has_fact(ref)]


def _objective_leakage(scenario: Scenario) -> _Found:
    shared = _shared_text(scenario)
    for agent in scenario.agents:
        for ref in _known(scenario, agent, ItemList.DESIRED):
            value = scenario.fact(ref).value
            for where, text in (("primary_objective", agent.primary_objective), shared):
                evidence = _stated(value, text)
                if evidence is not None:
                    yield (
                        agent.name,
                        ref,
                        f"{where} already states desired item {ref!r}: {evidence}",
                    )
                    break


def _shared_text(scenario: Scenario) -> tuple[str, str]:
    """What every agent reads: the scenario description and the shared goal."""
    return (
        "the scenario description or shared goal",
        f"{scenario.description}\n{scenario.shared_goal}",
    )


def _stated(value: str, text: str) -> str | None:
    """Why `text` states `value` (module docstring), or None when it does not."""
    value_tokens = _tokens(value)
    text_tokens = _tokens(text)
    text_pairs = set(itertools.pairwise(text_tokens))
    quantities = []
    for i, token in enumerate(value_tokens):
        if not token[0].isdigit():
            continue
        context = {
            *([(value_tokens[i - 1], token)] if i > 0 else []),
            *([(token, value_tokens[i + 1])] if i + 1 < len(value_tokens) else []),
        }
        stated = context & text_pairs if context else token in text_tokens
        if not stated:
            break
        quantities.append(" ".join(value_tokens[max(i - 1, 0) : i + 2]))
    else:
        if quantities:
            return f"it repeats {'; '.join(quantities)!r} from the item's value"
    words = content_words(value)
    if len(words) >= 3 and words_within(words, content_words(text)):
        return "it contains every content word of the item's value"
    return None


def _tokens(text: str) -> list[str]:
    """Lowercased words and numbers (thousands separators dropped), in order."""
    return [t.replace(",", "") for t in _TOKEN.findall(text.lower())]


def _sensitivity_consistency(scenario: Scenario) -> _Found:
    for agent in scenario.agents:
        for ref in _known(scenario, agent, ItemList.WHAT_NOT_TO_SHARE):
            own = agent.own_fact(ref)
            if own is None:
                msg = f"what_not_to_share item {ref!r} is not in the agent's own knowledge"
                yield agent.name, ref, msg
            elif own.sensitivity is Sensitivity.PUBLIC:
                msg = f"what_not_to_share item {ref!r} is labelled public in the agent's knowledge"
                yield agent.name, ref, msg + "; withheld items must be private"
    for ref in scenario.fact_ids:
        labels = {h: scenario.fact_as_held(h, ref).sensitivity for h in scenario.holders_of(ref)}
        public = ", ".join(h for h, label in labels.items() if label is Sensitivity.PUBLIC)
        private = ", ".join(h for h, label in labels.items() if label is Sensitivity.PRIVATE)
        if public and private:
            yield None, ref, f"item {ref!r} is labelled public by {public} and private by {private}"


def _goal_sourcing(scenario: Scenario) -> _Found:
    for agent in scenario.agents:
        for ref in _known(scenario, agent, ItemList.DESIRED):
            if agent.holds(ref):
                yield (
                    agent.name,
                    ref,
                    f"desired item {ref!r} is already in the agent's own knowledge",
                )
            if not [h for h in scenario.holders_of(ref) if h != agent.name]:
                yield agent.name, ref, f"desired item {ref!r} is not held by any other agent"


def _goal_shareability(scenario: Scenario) -> _Found:
    for agent in scenario.agents:
        for ref in _known(scenario, agent, ItemList.DESIRED):
            reasons = []
            for holder in (h for h in scenario.holders_of(ref) if h != agent.name):
                other = scenario.agent(holder)
                if ref in other.what_not_to_share:
                    reasons.append(f"{holder} lists it in what_not_to_share")
                elif _has_unresolved(scenario, holder, ItemList.WHAT_TO_SHARE):
                    break  # an unresolved what_to_share entry may name it: not certain
                elif ref not in other.what_to_share:
                    reasons.append(f"{holder} does not list it in what_to_share")
                else:
                    break
            else:
                if reasons:
                    msg = f"desired item {ref!r} would not be disclosed by any holder"
                    yield agent.name, ref, f"{msg} ({'; '.join(reasons)})"


def _domain_map(scenario: Scenario) -> _Found:
    domain_map = scenario.knowledge_domain_map
    mapped_roles = {role for roles in domain_map.values() for role in roles}
    tagged = any(f.domain is not None for a in scenario.agents for f in a.knowledge)
    for domain, roles in domain_map.items():
        for role in roles:
            expert = scenario.agent_with_role(role)
            msg = f"domain {domain!r} maps to role {role!r}"
            if expert is None:
                yield None, domain, f"{msg}, which no agent has"
            elif tagged and not any(f.domain == domain for f in expert.knowledge):
                yield expert.name, domain, f"{msg}, but {expert.name} holds no item in that domain"
    for ref in scenario.fact_ids:
        fact_domain = scenario.fact(ref).domain
        if fact_domain is not None and fact_domain not in domain_map:
            msg = (
                f"item {ref!r} has domain {fact_domain!r}, which knowledge_domain_map does not list"
            )
            yield scenario.holders_of(ref)[0], ref, msg
    for agent in scenario.agents:
        for ref in _known(scenario, agent, ItemList.DESIRED):
            fact_domain = scenario.fact(ref).domain
            holders = [h for h in scenario.holders_of(ref) if h != agent.name]
            if fact_domain is None:
                if holders and not any(scenario.agent(h).role in mapped_roles for h in holders):
                    msg = f"desired item {ref!r} is held only by agents whose role"
                    names = ", ".join(holders)
                    yield agent.name, ref, f"{msg} knowledge_domain_map never names ({names})"
                continue
            experts = set(scenario.experts(fact_domain))
            if holders and fact_domain in domain_map and not experts & set(holders):
                msg = f"desired item {ref!r} belongs to domain {fact_domain!r}, but no other agent"
                yield agent.name, ref, f"{msg} mapped to that domain holds it"


def _policy_consistency(scenario: Scenario) -> _Found:
    for agent in scenario.agents:
        for which in ItemList:
            refs = agent.items(which)
            for ref in dict.fromkeys(r for r in refs if refs.count(r) > 1):
                yield agent.name, ref, f"item {ref!r} appears more than once in {which}"
        for ref in _known(scenario, agent, ItemList.WHAT_TO_SHARE):
            if ref in agent.what_not_to_share:
                msg = f"item {ref!r} is in both what_to_share and what_not_to_share"
                yield agent.name, ref, msg
            if not agent.holds(ref):
                msg = f"what_to_share item {ref!r} is not in the agent's own knowledge"
                yield agent.name, ref, msg
        for ref in _known(scenario, agent, ItemList.DESIRED):
            if ref in agent.cannot_know_knowledge:
                msg = f"item {ref!r} is in both desired_knowledge and cannot_know_knowledge"
                yield agent.name, ref, msg


def _cannot_know_unreachable(scenario: Scenario) -> _Found:
    shared = _shared_text(scenario)
    for agent in scenario.agents:
        for ref in _known(scenario, agent, ItemList.CANNOT_KNOW):
            if agent.holds(ref):
                yield agent.name, ref, f"cannot_know item {ref!r} is in the agent's own knowledge"
            value = scenario.fact(ref).value
            for where, text in (("primary_objective", agent.primary_objective), shared):
                evidence = _stated(value, text)
                if evidence is not None:
                    yield agent.name, ref, f"{where} states cannot_know item {ref!r}: {evidence}"
            for holder in (h for h in scenario.holders_of(ref) if h != agent.name):
                if scenario.fact_as_held(holder, ref).sensitivity is Sensitivity.PUBLIC:
                    msg = f"cannot_know item {ref!r} is labelled public by holder {holder}"
                    yield agent.name, ref, msg
                withheld = ref in scenario.agent(holder).what_not_to_share
                if not withheld and not _has_unresolved(
                    scenario, holder, ItemList.WHAT_NOT_TO_SHARE
                ):
                    msg = f"cannot_know item {ref!r} is not in what_not_to_share of holder"
                    yield agent.name, ref, f"{msg} {holder}"
