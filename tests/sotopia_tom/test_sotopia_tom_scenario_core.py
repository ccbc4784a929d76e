"""The shipped `core` split: hand-written scenarios, at least two per sector and six in the
sectors grown to six, all rule-clean. Counts are per sector, never a fixed
total, so scenarios added to one sector leave the others' checks alone."""

from __future__ import annotations

from importlib.resources import files

import pytest

from confide.envs.sotopia_tom.dataset import load_scenario_by_id, load_split, split_names
from confide.envs.sotopia_tom.scenario import (
    Scenario,
    ScenarioError,
    Sector,
    Sensitivity,
    scenario_to_json,
)
from confide.envs.sotopia_tom.validation import validate_scenario


@pytest.fixture(scope="module")
def core() -> list[Scenario]:
    return load_split("core")


def test_core_is_a_shipped_split() -> None:
    assert "core" in split_names()


def test_every_core_scenario_validates_clean(core: list[Scenario]) -> None:
    assert {s.id: validate_scenario(s) for s in core} == {s.id: [] for s in core}


GROWN = tuple(Sector)
"""Sectors grown to six (all of them): 6 scenarios (the paper's data have 3-5
agents)."""


def test_sector_and_agent_count_distribution(core: list[Scenario]) -> None:
    sizes = {sector: [len(s.agents) for s in core if s.sector is sector] for sector in Sector}
    assert sum(map(len, sizes.values())) == len(core)  # every scenario names a sector
    for sector, counts in sizes.items():
        assert len(counts) >= 2 and set(counts) <= {3, 4, 5}, (sector, counts)
        assert len(set(counts)) >= 2, f"{sector}: every scenario has {counts[0]} agents"
    for sector in GROWN:
        assert len(sizes[sector]) == 6 and set(sizes[sector]) == {3, 4, 5}, (sector, sizes)


def test_ids_are_unique_and_files_are_canonical(core: list[Scenario]) -> None:
    assert len({s.id for s in core}) == len(core)
    folder = files("confide.envs.sotopia_tom").joinpath("data", "core")
    for s in core:
        text = folder.joinpath(f"{s.id}.json").read_text(encoding="utf-8")
        assert text == scenario_to_json(s), f"{s.id}.json is not in canonical form"


def test_authoring_conventions(core: list[Scenario]) -> None:
    for s in core:
        assert s.description and s.unresolved_references == ()
        facts = [f for a in s.agents for f in a.knowledge]
        assert all(f.domain is not None for f in facts), s.id
        assert len({a.role for a in s.agents}) == len(s.agents)
        assert any(s.forbidden(a.name) for a in s.agents), s.id
        for a in s.agents:
            assert a.desired_knowledge, (s.id, a.name)
            assert any(f.sensitivity is Sensitivity.PRIVATE for f in a.knowledge)
            # every item is covered by the sharing policy, so DA has an expectation for it
            assert {f.id for f in a.knowledge} == {*a.what_to_share, *a.what_not_to_share}
            # private items to share go by direct message to someone who wants them
            for fact in a.knowledge:
                if fact.sensitivity is Sensitivity.PRIVATE and fact.id in a.what_to_share:
                    assert set(s.wanted_by(fact.id)) - {a.name}, (s.id, fact.id)


def test_owner_per_domain_map_holds_every_desired_item(core: list[Scenario]) -> None:
    """Also where a domain maps to several roles: the first of its experts other than the
    asker (whom an agent following the map asks) is the owner."""
    shared_domains = 0
    for s in core:
        shared_domains += sum(len(roles) > 1 for roles in s.knowledge_domain_map.values())
        for a in s.agents:
            for item in s.desired(a.name):
                owner = s.owner_of(item)
                assert owner != a.name and s.agent(owner).holds(item)
                experts = s.experts(s.fact(item).domain or "")
                assert next(e for e in experts if e != a.name) == owner, (s.id, a.name, item)
                assert item in s.items_to_share(owner)
    assert shared_domains > 0


def test_forbidden_items_are_only_held_as_private_withheld(core: list[Scenario]) -> None:
    for s in core:
        for a in s.agents:
            for item in s.forbidden(a.name):
                assert not s.agent(a.name).holds(item)
                for holder in s.holders_of(item):
                    assert s.fact_as_held(holder, item).sensitivity is Sensitivity.PRIVATE
                    assert item in s.items_not_to_share(holder)


def test_lookup_by_id_and_unknown_names() -> None:
    scenario = load_scenario_by_id("core", "finance-sme-loan")
    assert scenario.sector is Sector.FINANCE and len(scenario.agents) == 3
    with pytest.raises(ScenarioError, match=r"unknown scenario split 'gold'; available: \["):
        load_split("gold")
    with pytest.raises(ScenarioError, match="split 'core' has no scenario 'nope'"):
        load_scenario_by_id("core", "nope")


def test_grown_sectors_spread_agent_counts_evenly(core: list[Scenario]) -> None:
    """Six scenarios in a grown sector: two each with 3, 4 and 5 agents."""
    for sector in GROWN:
        sizes = [len(s.agents) for s in core if s.sector is sector]
        assert sorted(sizes) == [3, 3, 4, 4, 5, 5], (sector, sizes)
