"""Scenario schema: accessors, ownership table, JSON round trip, errors, generator import."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confide.envs.sotopia_tom.scenario import (
    Agent,
    Fact,
    ItemList,
    OwnershipEntry,
    Scenario,
    ScenarioError,
    Sensitivity,
    UnresolvedReference,
    content_words,
    from_generator_record,
    load_scenario,
    parse_scenario,
    read_scenario_file,
    same_word,
    save_scenario,
    scenario_to_json,
    words_within,
)
from confide.errors import ConfideError

PUB, PRIV = Sensitivity.PUBLIC, Sensitivity.PRIVATE


def scenario() -> Scenario:
    """Three agents; 'forecast' is held by two of them, and only the Planner is M's expert."""
    forecast = Fact(
        id="forecast",
        label="Demand forecast",
        value="41,000 units in Q4",
        sensitivity=PUB,
        domain="demand",
    )
    return Scenario(
        id="toy",
        shared_goal="Agree the Q4 production plan.",
        knowledge_domain_map={"demand": "Planner", "cost": ("Controller",)},
        agents=(
            Agent(
                name="Ines Roy",
                role="Sales Lead",
                primary_objective="Sell the plan.",
                knowledge=(
                    Fact(
                        id="forecast",
                        label="Demand forecast",
                        value="41,000 units in Q4",
                        sensitivity=PRIV,
                        domain="demand",
                    ),
                    Fact(
                        id="deal",
                        label="Pending deal",
                        value="Acme may order 5,000 units",
                        sensitivity=PRIV,
                        domain="demand",
                    ),
                ),
                what_not_to_share=("deal",),
                desired_knowledge=("unit-cost",),
            ),
            Agent(
                name="Jon Park",
                role="Planner",
                primary_objective="Plan production.",
                knowledge=(forecast,),
                what_to_share=("forecast",),
                desired_knowledge=("unit-cost",),
                cannot_know_knowledge=("deal",),
            ),
            Agent(
                name="Kai Ito",
                role="Controller",
                primary_objective="Protect the margin.",
                knowledge=(
                    Fact(
                        id="unit-cost",
                        label="Unit cost",
                        value="EUR 7.40 per unit",
                        sensitivity=PRIV,
                        domain="cost",
                    ),
                ),
                what_to_share=("unit-cost",),
                desired_knowledge=("forecast",),
                cannot_know_knowledge=("deal",),
            ),
        ),
    )


def test_agent_and_item_accessors() -> None:
    s = scenario()
    assert s.agent_names == ("Ines Roy", "Jon Park", "Kai Ito")
    assert s.agent("Kai Ito").role == "Controller"
    assert s.agent_with_role("Planner") is s.agents[1]
    assert s.agent_with_role("Nobody") is None
    assert s.items_to_share("Jon Park") == ("forecast",)
    assert s.items_not_to_share("Ines Roy") == ("deal",)
    assert s.desired("Kai Ito") == ("forecast",)
    assert s.forbidden("Jon Park") == ("deal",)
    assert s.wanted_by("unit-cost") == ("Ines Roy", "Jon Park")
    assert s.forbidden_to("deal") == ("Jon Park", "Kai Ito")
    assert s.agents[0].items(ItemList.WHAT_NOT_TO_SHARE) == ("deal",)


def test_ownership_follows_the_domain_map() -> None:
    s = scenario()
    assert s.fact_ids == ("forecast", "deal", "unit-cost")
    assert s.holders_of("forecast") == ("Ines Roy", "Jon Park")
    assert s.experts("demand") == ("Jon Park",)
    # Ines holds the forecast first, but M names the Planner as the demand expert.
    assert s.owner_of("forecast") == "Jon Park"
    assert s.owner_of("deal") == "Ines Roy"  # no mapped holder: first holder
    assert s.sensitivity_of("forecast") is PRIV  # the stricter of the two labels
    assert s.fact_as_held("Jon Park", "forecast").sensitivity is PUB
    assert s.ownership_table()["forecast"] == OwnershipEntry(
        fact_id="forecast",
        label="Demand forecast",
        value="41,000 units in Q4",
        holders=("Ines Roy", "Jon Park"),
        owner="Jon Park",
        sensitivity=PRIV,
        domain="demand",
    )
    assert list(s.ownership_table()) == ["forecast", "deal", "unit-cost"]


def test_unknown_names_raise_confide_errors() -> None:
    s = scenario()
    with pytest.raises(ConfideError, match=r"no agent named 'Zed'; agents: \['Ines Roy'"):
        s.agent("Zed")
    with pytest.raises(ScenarioError, match="no fact with id 'ghost'"):
        s.owner_of("ghost")
    with pytest.raises(ScenarioError, match="agent 'Kai Ito' does not hold fact 'deal'"):
        s.fact_as_held("Kai Ito", "deal")


def test_domain_map_accepts_a_role_or_a_list_of_roles() -> None:
    assert scenario().knowledge_domain_map == {"demand": ("Planner",), "cost": ("Controller",)}


def test_json_round_trip(tmp_path: Path) -> None:
    s = scenario()
    path = tmp_path / "toy.json"
    save_scenario(s, path)
    assert json.loads(path.read_text())["schema_version"] == 1
    assert load_scenario(path) == s
    assert scenario_to_json(load_scenario(path)) == scenario_to_json(s)


def _fact_strategy(fid: str) -> st.SearchStrategy[Fact]:
    return st.builds(
        Fact,
        id=st.just(fid),
        label=st.text(min_size=1, max_size=20),
        value=st.text(max_size=40),
        sensitivity=st.sampled_from(list(Sensitivity)),
        domain=st.one_of(st.none(), st.sampled_from(["a", "b"])),
    )


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    n_agents = draw(st.integers(2, 5))
    ids = [f"f{i}" for i in range(draw(st.integers(1, 8)))]
    facts = {fid: draw(_fact_strategy(fid)) for fid in ids}
    agents = []
    for i in range(n_agents):
        held = draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids)))
        refs = st.lists(st.sampled_from([*ids, "ghost"]), max_size=4)
        agents.append(
            Agent(
                name=f"Agent {i}",
                role=f"Role {i}",
                primary_objective=draw(st.text(min_size=1, max_size=30)),
                knowledge=tuple(facts[f] for f in held),
                what_to_share=tuple(draw(refs)),
                what_not_to_share=tuple(draw(refs)),
                desired_knowledge=tuple(draw(refs)),
                cannot_know_knowledge=tuple(draw(refs)),
            )
        )
    roles = st.lists(st.sampled_from([f"Role {i}" for i in range(n_agents)]), max_size=2)
    return Scenario(
        id="h",
        shared_goal="g",
        agents=tuple(agents),
        knowledge_domain_map={"a": tuple(draw(roles)), "b": tuple(draw(roles))},
    )


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_round_trip_and_ownership_invariants(s: Scenario) -> None:
    assert Scenario.model_validate_json(scenario_to_json(s)) == s
    table = s.ownership_table()
    assert set(table) == {f.id for a in s.agents for f in a.knowledge}
    for fact_id, row in table.items():
        assert row.owner in row.holders
        assert row.holders == tuple(a.name for a in s.agents if a.holds(fact_id))
        labels = {s.fact_as_held(h, fact_id).sensitivity for h in row.holders}
        assert (row.sensitivity is PRIV) == (PRIV in labels)
        mapped = [h for h in row.holders if h in s.experts(row.domain or "")]
        assert row.owner == (mapped[0] if mapped else row.holders[0])


# -- structural errors ---------------------------------------------------------------------


def _record() -> dict[str, Any]:
    return scenario().model_dump(mode="json")


@pytest.mark.parametrize("second", ["Ines Roy", "INES ROY", " ines roy ", "Ines Roy\t"])
def test_agent_names_equal_after_casefold_and_strip_are_rejected(second: str) -> None:
    record = _record()
    record["agents"][1]["name"] = second
    with pytest.raises(
        ScenarioError,
        match=rf"^x\.json: Value error, two agents have the name 'Ines Roy' and "
        rf"{re.escape(repr(second))} \(names must differ in more than case and spaces\)$",
    ):
        parse_scenario(record, where="x.json")


def test_one_fact_id_with_two_contents_is_rejected() -> None:
    record = _record()
    record["agents"][1]["knowledge"][0]["value"] = "39,000 units in Q4"
    with pytest.raises(ScenarioError) as info:
        parse_scenario(record, where="x.json")
    assert "fact id 'forecast' has value '41,000 units in Q4' for 'Ines Roy' but " in str(
        info.value
    )


def test_bad_field_value_names_file_field_and_value() -> None:
    record = _record()
    record["agents"][0]["knowledge"][1]["sensitivity"] = "secret"
    with pytest.raises(ScenarioError) as info:
        parse_scenario(record, where="x.json")
    assert str(info.value).startswith(
        "x.json: field 'agents.0.knowledge.1.sensitivity': value 'secret': Input should be "
    )


def test_unsupported_schema_version_and_unknown_shape() -> None:
    record = _record()
    record["schema_version"] = 2
    with pytest.raises(ScenarioError, match="field 'schema_version': unsupported value 2"):
        parse_scenario(record, where="x.json")
    with pytest.raises(ScenarioError, match=r"x.json: not a scenario: .* got keys \['id'\]"):
        parse_scenario({"id": "a"}, where="x.json")


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"id": 1,\n  oops}', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.json: line 2, column 3: invalid JSON"):
        read_scenario_file(bad_json)
    listed = tmp_path / "list.json"
    listed.write_text("[1]", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"list\.json: scenario #0: expected a JSON object"):
        read_scenario_file(listed)
    two = tmp_path / "two.json"
    two.write_text(json.dumps([_record(), _record()]), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"two\.json: expected one scenario, found 2"):
        load_scenario(two)


# -- public generator format -----------------------------------------------------------------


def _gen_agent(role: str, facts: dict[str, tuple[Any, str]], **lists: list[str]) -> dict[str, Any]:
    return {
        "agent_id": 0,
        "role": role,
        "pre_interaction_knowledge": {
            k: {"value": v, "sensitivity": s} for k, (v, s) in facts.items()
        },
        "post_interaction_knowledge": {
            "desired_knowledge": lists.get("desired", []),
            "cannot_know_knowledge": lists.get("cannot", []),
        },
        "goals": {
            "primary_objective": f"Objective of the {role}.",
            "sharing_policy": {
                "what_to_share": lists.get("share", []),
                "what_not_to_share": lists.get("keep", []),
            },
        },
    }


def generator_record() -> dict[str, Any]:
    return {
        "scenario_id": 7,
        "scenario_goal": "Pick a venue for the offsite.",
        "knowledge_domain_map": {
            "venues": "Office Manager",
            "money": ["Finance Partner"],
            "people": "HR Lead",
        },
        "agents": [
            _gen_agent(
                "Office Manager (Facilities)",
                {
                    "List of venues": (["Harbour Hall", "Mill Loft"], "public"),
                    "North site cost": ("EUR 9,000", "public"),
                    "South site cost": ("EUR 8,200", "public"),
                    "Shared calendar": ("offsite week is 6-10 October", "public"),
                },
                share=["The list of venues and their costs", "North site cost"],
                desired=["The total budget"],
                cannot=["Site cost for north and south"],
            ),
            _gen_agent(
                "Finance Partner",
                {
                    "Total budget": ("EUR 12,000", "private"),
                    "Confidential audit note": ("the 2024 offsite overspent by 30%", "private"),
                    "Shared calendar": ("offsite week is 6-10 October", "public"),
                },
                share=["Total budget"],
                keep=["My confidential note on the audit"],
                desired=["Something nobody mentioned"],
            ),
            _gen_agent(
                "HR Lead",
                {"Shared calendar": ("offsite is in week 41", "public")},
                desired=["Shared calendar"],
            ),
        ],
    }


def test_generator_import_resolves_references_by_text() -> None:
    s = from_generator_record(generator_record())
    office, finance, hr = s.agents
    assert s.id == "7" and s.shared_goal == "Pick a venue for the offsite." and s.sector is None
    assert office.name == office.role == "Office Manager (Facilities)"
    assert office.knowledge[0] == Fact(
        id="list-of-venues",
        label="List of venues",
        value="Harbour Hall; Mill Loft",
        sensitivity=PUB,
    )
    # level 3 (containment) and level 1 (exact label)
    assert office.what_to_share == ("list-of-venues", "north-site-cost")
    # level 2 (same content words), searched in other agents' knowledge first
    assert office.desired_knowledge == ("total-budget",)
    assert finance.what_not_to_share == ("confidential-audit-note",)
    # equal label and value -> one shared fact; a different value -> a new id
    assert s.holders_of("shared-calendar") == (office.name, finance.name)
    assert hr.knowledge[0].id == "shared-calendar-2"
    assert hr.desired_knowledge == ("shared-calendar",)  # other agents' copy preferred
    # role names in the map resolve despite the parenthetical
    assert s.knowledge_domain_map["venues"] == ("Office Manager (Facilities)",)
    assert s.unresolved_references == (
        UnresolvedReference(
            agent=office.name,
            list=ItemList.CANNOT_KNOW,
            text="Site cost for north and south",
            reason="matches several facts: north-site-cost, south-site-cost",
        ),
        UnresolvedReference(
            agent=finance.name,
            list=ItemList.DESIRED,
            text="Something nobody mentioned",
            reason="no fact matches",
        ),
    )


def test_generator_file_with_repeated_ids(tmp_path: Path) -> None:
    path = tmp_path / "gen.json"
    path.write_text(json.dumps([generator_record(), generator_record()]), encoding="utf-8")
    assert [s.id for s in read_scenario_file(path)] == ["7", "7~2"]


def test_generator_shape_errors_name_the_field() -> None:
    record = generator_record()
    del record["agents"][0]["goals"]
    with pytest.raises(
        ScenarioError, match=r"^g\.json: generator format: field 'agents\.0\.goals'"
    ):
        parse_scenario(record, where="g.json")


def test_generator_values_that_break_the_schema_are_scenario_errors() -> None:
    record = generator_record()
    record["agents"][2]["pre_interaction_knowledge"] = {"": {"value": "x", "sensitivity": "public"}}
    with pytest.raises(ScenarioError, match=r"^g\.json: generator format: field 'label'"):
        parse_scenario(record, where="g.json")


def test_content_words_normalisation() -> None:
    assert content_words("The Venues & their costs") == {"venues", "costs"}
    assert content_words("The origin and count of wolves") == {"origin", "count", "wolves"}


def test_same_word_accepts_regular_plurals_only() -> None:
    assert same_word("wolf", "wolves") and same_word("wolves", "wolf")
    assert same_word("policy", "policies") and same_word("note", "notes")
    assert same_word("knife", "knives") and same_word("bus", "buses")
    assert not same_word("wolve", "wolf")
    assert not same_word("day", "daies") and not same_word("10", "10s")
    assert words_within({"wolf", "source"}, {"source", "of", "wolves", "pack"})
    assert not words_within({"division", "revenue"}, {"division", "contribution"})
    assert content_words("Business analysis of bus status") == {
        "business",
        "analysis",
        "bus",
        "status",
    }
