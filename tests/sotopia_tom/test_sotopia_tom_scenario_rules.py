"""Validation rules (the Sotopia-ToM paper §A.4, A.5): one failing fixture per rule, exact
messages."""

from __future__ import annotations

import copy
import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from confide.envs.sotopia_tom.cli.scenarios import app
from confide.envs.sotopia_tom.scenario import Scenario
from confide.envs.sotopia_tom.validation import (
    FileReport,
    Rule,
    ScenarioValidationError,
    Violation,
    ensure_valid,
    validate_files,
    validate_scenario,
)

ANA, BO, CY = "Ana Lee", "Bo Chen", "Cy Diaz"


def base() -> dict[str, Any]:
    """A small valid scenario as a JSON-like dict; tests break one rule at a time."""
    return {
        "schema_version": 1,
        "id": "fixture-1",
        "sector": "Finance",
        "description": "A buyer, an analyst and a lawyer plan a supplier contract.",
        "shared_goal": "Agree whether to sign the supplier contract this quarter.",
        "knowledge_domain_map": {"data": "Analyst", "money": "Buyer", "law": "Counsel"},
        "agents": [
            {
                "name": ANA,
                "role": "Analyst",
                "primary_objective": "Size the contract. I need the approved budget.",
                "knowledge": [
                    _fact(
                        "rate", "Churn rate", "churn of 4.2% in the first quarter", "public", "data"
                    ),
                    _fact(
                        "memo",
                        "Audit memo",
                        "the auditor flagged invoice 7781 as duplicated",
                        "private",
                        "data",
                    ),
                ],
                "what_to_share": ["rate"],
                "what_not_to_share": ["memo"],
                "desired_knowledge": ["budget"],
                "cannot_know_knowledge": ["cuts"],
            },
            {
                "name": BO,
                "role": "Buyer",
                "primary_objective": "Buy within budget. I need the churn figure.",
                "knowledge": [
                    _fact(
                        "budget", "Q3 budget", "120,000 EUR approved on 2 May", "private", "money"
                    ),
                    _fact(
                        "cuts",
                        "Staff cuts",
                        "12 roles cut in the buying team in June",
                        "private",
                        "money",
                    ),
                ],
                "what_to_share": ["budget"],
                "what_not_to_share": ["cuts"],
                "desired_knowledge": ["rate"],
                "cannot_know_knowledge": ["memo"],
            },
            {
                "name": CY,
                "role": "Counsel",
                "primary_objective": "Keep the contract lawful. I need the churn figure.",
                "knowledge": [
                    _fact(
                        "notice",
                        "Notice clause",
                        "clause 9 requires 90 days of notice",
                        "public",
                        "law",
                    ),
                ],
                "what_to_share": ["notice"],
                "what_not_to_share": [],
                "desired_knowledge": ["rate"],
                "cannot_know_knowledge": [],
            },
        ],
    }


def _fact(fid: str, label: str, value: str, sensitivity: str, domain: str | None) -> dict[str, Any]:
    return {"id": fid, "label": label, "value": value, "sensitivity": sensitivity, "domain": domain}


def agent(record: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in record["agents"] if a["name"] == name)


def check(record: dict[str, Any]) -> list[tuple[str, str | None, str | None, str]]:
    """(rule, agent, item, message) of every violation."""
    scenario = Scenario.model_validate(record)
    return [(v.rule.value, v.agent, v.item, v.message) for v in validate_scenario(scenario)]


def test_base_fixture_is_valid() -> None:
    assert check(base()) == []


# -- objective_leakage -----------------------------------------------------------------------


def test_objective_stating_desired_numbers_is_leakage() -> None:
    record = base()
    agent(record, ANA)["primary_objective"] = "Confirm the 120,000 EUR budget approved on 2 May."
    assert check(record) == [
        (
            "objective_leakage",
            ANA,
            "budget",
            "primary_objective already states desired item 'budget': it repeats "
            "'120000 eur; on 2 may' from the item's value",
        )
    ]


def test_description_stating_desired_words_is_leakage() -> None:
    record = base()
    agent(record, BO)["knowledge"][0]["value"] = "approved by the finance committee"
    record["description"] = "The finance committee has approved the budget."
    assert check(record) == [
        (
            "objective_leakage",
            ANA,
            "budget",
            "the scenario description or shared goal already states desired item 'budget': "
            "it contains every content word of the item's value",
        )
    ]


def test_number_without_its_context_is_not_leakage() -> None:
    record = base()
    agent(record, ANA)["primary_objective"] = "Report by 2 June on the 120,000 unit order."
    assert check(record) == []


# -- sensitivity_consistency --------------------------------------------------------------


def test_withholding_an_item_the_agent_does_not_hold() -> None:
    record = base()
    agent(record, CY)["what_not_to_share"] = ["memo"]
    assert check(record) == [
        (
            "sensitivity_consistency",
            CY,
            "memo",
            "what_not_to_share item 'memo' is not in the agent's own knowledge",
        )
    ]


def test_withholding_a_public_item() -> None:
    record = base()
    agent(record, CY)["what_to_share"] = []
    agent(record, CY)["what_not_to_share"] = ["notice"]
    assert check(record) == [
        (
            "sensitivity_consistency",
            CY,
            "notice",
            "what_not_to_share item 'notice' is labelled public in the agent's knowledge; "
            "withheld items must be private",
        )
    ]


def test_holders_disagreeing_on_sensitivity() -> None:
    record = base()
    shared = copy.deepcopy(agent(record, CY)["knowledge"][0])
    shared["sensitivity"] = "private"
    agent(record, BO)["knowledge"].append(shared)
    assert check(record) == [
        (
            "sensitivity_consistency",
            None,
            "notice",
            "item 'notice' is labelled public by Cy Diaz and private by Bo Chen",
        )
    ]


def test_withholding_an_unknown_id() -> None:
    record = base()
    agent(record, ANA)["what_not_to_share"].append("ghost")
    assert check(record) == [
        (
            "sensitivity_consistency",
            ANA,
            "ghost",
            "what_not_to_share item 'ghost' matches no single fact in the scenario (unknown id)",
        )
    ]


# -- goal_sourcing / goal_shareability ------------------------------------------------------


def test_desiring_an_item_only_the_agent_holds() -> None:
    record = base()
    agent(record, CY)["desired_knowledge"] = ["notice"]
    assert check(record) == [
        (
            "goal_sourcing",
            CY,
            "notice",
            "desired item 'notice' is already in the agent's own knowledge",
        ),
        ("goal_sourcing", CY, "notice", "desired item 'notice' is not held by any other agent"),
    ]


def test_desiring_an_unknown_id() -> None:
    record = base()
    agent(record, CY)["desired_knowledge"] = ["rate", "ghost"]
    assert check(record) == [
        (
            "goal_sourcing",
            CY,
            "ghost",
            "desired_knowledge item 'ghost' matches no single fact in the scenario (unknown id)",
        )
    ]


def test_desired_item_that_no_holder_shares() -> None:
    record = base()
    agent(record, BO)["what_to_share"] = []
    assert check(record) == [
        (
            "goal_shareability",
            ANA,
            "budget",
            "desired item 'budget' would not be disclosed by any holder "
            "(Bo Chen does not list it in what_to_share)",
        )
    ]


def test_desired_item_that_every_holder_withholds() -> None:
    record = base()
    copy_of_budget = copy.deepcopy(agent(record, BO)["knowledge"][0])
    agent(record, CY)["knowledge"].append(copy_of_budget)
    agent(record, CY)["what_not_to_share"] = ["budget"]
    agent(record, BO)["what_to_share"] = []
    agent(record, BO)["what_not_to_share"] = ["cuts", "budget"]
    assert check(record) == [
        (
            "goal_shareability",
            ANA,
            "budget",
            "desired item 'budget' would not be disclosed by any holder "
            "(Bo Chen lists it in what_not_to_share; Cy Diaz lists it in what_not_to_share)",
        )
    ]


def test_one_willing_holder_makes_the_item_shareable() -> None:
    record = base()
    copy_of_budget = copy.deepcopy(agent(record, BO)["knowledge"][0])
    agent(record, CY)["knowledge"].append(copy_of_budget)
    agent(record, CY)["what_not_to_share"] = ["budget"]
    assert check(record) == []


# -- domain_map -------------------------------------------------------------------------------


def test_domain_mapped_to_a_missing_role() -> None:
    record = base()
    record["knowledge_domain_map"]["law"] = "Judge"
    assert check(record) == [
        ("domain_map", None, "law", "domain 'law' maps to role 'Judge', which no agent has")
    ]


def test_domain_mapped_to_a_role_without_that_expertise() -> None:
    record = base()
    record["knowledge_domain_map"]["money"] = "Counsel"
    assert check(record) == [
        (
            "domain_map",
            CY,
            "money",
            "domain 'money' maps to role 'Counsel', but Cy Diaz holds no item in that domain",
        ),
        (
            "domain_map",
            ANA,
            "budget",
            "desired item 'budget' belongs to domain 'money', but no other agent mapped to "
            "that domain holds it",
        ),
    ]


def test_fact_domain_missing_from_the_map() -> None:
    record = base()
    agent(record, CY)["knowledge"][0]["domain"] = "tax"
    assert check(record) == [
        (
            "domain_map",
            CY,
            "law",
            "domain 'law' maps to role 'Counsel', but Cy Diaz holds no item in that domain",
        ),
        (
            "domain_map",
            CY,
            "notice",
            "item 'notice' has domain 'tax', which knowledge_domain_map does not list",
        ),
    ]


def test_untagged_facts_need_holders_named_in_the_map() -> None:
    record = base()
    for a in record["agents"]:
        for fact in a["knowledge"]:
            fact["domain"] = None
    del record["knowledge_domain_map"]["money"]
    assert check(record) == [
        (
            "domain_map",
            ANA,
            "budget",
            "desired item 'budget' is held only by agents whose role knowledge_domain_map "
            "never names (Bo Chen)",
        )
    ]


# -- policy_consistency -----------------------------------------------------------------------


def test_item_both_shared_and_withheld() -> None:
    record = base()
    agent(record, ANA)["what_to_share"].append("memo")
    assert check(record) == [
        (
            "policy_consistency",
            ANA,
            "memo",
            "item 'memo' is in both what_to_share and what_not_to_share",
        )
    ]


def test_sharing_an_item_the_agent_does_not_hold() -> None:
    record = base()
    agent(record, CY)["what_to_share"].append("rate")
    assert check(record) == [
        (
            "policy_consistency",
            CY,
            "rate",
            "what_to_share item 'rate' is not in the agent's own knowledge",
        )
    ]


def test_item_both_desired_and_forbidden() -> None:
    record = base()
    agent(record, CY)["cannot_know_knowledge"] = ["rate"]
    found = check(record)
    assert (
        "policy_consistency",
        CY,
        "rate",
        "item 'rate' is in both desired_knowledge and cannot_know_knowledge",
    ) in found


def test_item_listed_twice() -> None:
    record = base()
    agent(record, CY)["what_to_share"] = ["notice", "notice"]
    assert check(record) == [
        (
            "policy_consistency",
            CY,
            "notice",
            "item 'notice' appears more than once in what_to_share",
        )
    ]


def test_sharing_an_unknown_id() -> None:
    record = base()
    agent(record, CY)["what_to_share"].append("ghost")
    assert check(record) == [
        (
            "policy_consistency",
            CY,
            "ghost",
            "what_to_share item 'ghost' matches no single fact in the scenario (unknown id)",
        )
    ]


# -- cannot_know_unreachable -------------------------------------------------------------------


def test_forbidden_item_held_by_the_agent() -> None:
    record = base()
    agent(record, CY)["cannot_know_knowledge"] = ["notice"]
    assert check(record) == [
        (
            "cannot_know_unreachable",
            CY,
            "notice",
            "cannot_know item 'notice' is in the agent's own knowledge",
        )
    ]


def test_forbidden_item_public_and_shareable_by_its_holder() -> None:
    record = base()
    agent(record, ANA)["cannot_know_knowledge"] = ["notice"]
    assert check(record) == [
        (
            "cannot_know_unreachable",
            ANA,
            "notice",
            "cannot_know item 'notice' is labelled public by holder Cy Diaz",
        ),
        (
            "cannot_know_unreachable",
            ANA,
            "notice",
            "cannot_know item 'notice' is not in what_not_to_share of holder Cy Diaz",
        ),
    ]


def test_forbidden_item_stated_in_the_agents_objective() -> None:
    record = base()
    agent(record, ANA)["primary_objective"] += " Do not plan around the 12 roles cut in June."
    assert check(record) == [
        (
            "cannot_know_unreachable",
            ANA,
            "cuts",
            "primary_objective states cannot_know item 'cuts': it repeats '12 roles' from the "
            "item's value",
        )
    ]


def test_forbidden_unknown_id() -> None:
    record = base()
    agent(record, CY)["cannot_know_knowledge"] = ["ghost"]
    assert check(record) == [
        (
            "cannot_know_unreachable",
            CY,
            "ghost",
            "cannot_know_knowledge item 'ghost' matches no single fact in the scenario "
            "(unknown id)",
        )
    ]


# -- reporting ---------------------------------------------------------------------------------


def test_every_violation_is_reported_in_rule_order() -> None:
    record = base()
    agent(record, CY)["what_to_share"].append("ghost")  # policy_consistency
    agent(record, CY)["what_not_to_share"] = ["memo"]  # sensitivity_consistency
    agent(record, BO)["what_to_share"] = []  # goal_shareability
    rules = [rule for rule, *_ in check(record)]
    assert rules == ["sensitivity_consistency", "goal_shareability", "policy_consistency"]


def test_ensure_valid_lists_every_violation() -> None:
    record = base()
    agent(record, BO)["what_to_share"] = []
    agent(record, CY)["what_to_share"].append("ghost")
    with pytest.raises(ScenarioValidationError) as info:
        ensure_valid(Scenario.model_validate(record))
    text = str(info.value)
    assert text.startswith("scenario 'fixture-1' breaks 2 rule(s):")
    assert "[goal_shareability] scenario fixture-1, agent Bo Chen" not in text
    assert "[goal_shareability] scenario fixture-1, agent Ana Lee, item budget:" in text
    assert "[policy_consistency] scenario fixture-1, agent Cy Diaz, item ghost:" in text


def test_violation_render_omits_missing_parts() -> None:
    v = Violation(rule=Rule.DOMAIN_MAP, scenario_id="s", agent=None, item="law", message="m")
    assert v.render() == "[domain_map] scenario s, item law: m"


def _write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_validate_files_reports_per_file_and_duplicate_ids(tmp_path: Path) -> None:
    good = _write(tmp_path, "good.json", base())
    broken = base()
    agent(broken, BO)["what_to_share"] = []
    bad = _write(tmp_path, "bad.json", broken)
    unreadable = tmp_path / "nope.json"
    unreadable.write_text("{not json", encoding="utf-8")
    reports = validate_files([good, bad, unreadable])
    assert [r.path for r in reports] == [str(good), str(bad), str(unreadable)]
    assert reports[0].violations == () and reports[0].scenario_ids == ("fixture-1",)
    assert [v.rule for v in reports[1].violations] == [
        Rule.DUPLICATE_ID,
        Rule.GOAL_SHAREABILITY,
    ]
    assert [v.rule for v in reports[1].import_problems] == [Rule.DUPLICATE_ID]
    assert [v.rule for v in reports[1].rule_violations] == [Rule.GOAL_SHAREABILITY]
    assert reports[0].expertise_unchecked == ()  # its facts carry domains: A.5.4 checkable
    assert reports[1].violations[0].message == f"scenario id already used in {good}"
    assert reports[2].error == f"{unreadable}: line 1, column 2: invalid JSON: " + (
        "Expecting property name enclosed in double quotes"
    )


def test_cli_exit_codes_and_output(tmp_path: Path) -> None:
    runner = CliRunner()
    good = _write(tmp_path, "good.json", base())
    result = runner.invoke(app, ["validate", str(good)])
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == (
        "1 scenario(s) checked, 0 import problem(s), 0 rule violation(s)"
    )

    broken = base()
    broken["id"] = "fixture-2"
    agent(broken, BO)["what_to_share"] = []
    bad = _write(tmp_path, "bad.json", broken)
    result = runner.invoke(app, ["validate", str(good), str(bad)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "rule violations:",
        f"{bad}: [goal_shareability] scenario fixture-2, agent Ana Lee, item budget: desired "
        "item 'budget' would not be disclosed by any holder (Bo Chen does not list it in "
        "what_to_share)",
        "2 scenario(s) checked, 0 import problem(s), 1 rule violation(s)",
    ]

    result = runner.invoke(app, ["validate", str(tmp_path / "missing.json"), str(bad)])
    assert result.exit_code == 2
    assert "cannot read scenario file " in result.output and "missing.json" in result.output
    assert (
        "1 scenario(s) checked, 0 import problem(s), 1 rule violation(s), 1 file(s) unreadable"
        in result.output.splitlines()
    )


# -- the paper's unreviewed generator output ---------------------------------------------------


def _shared() -> Path:
    return Path(os.environ.get("CONFIDE_SHARED", Path(__file__).parents[2] / ".." / "shared"))


ANCHOR = _shared() / "anchors" / "sotopia_tom" / "scenarios_public_generator.json"


needs_anchor = pytest.mark.skipif(not ANCHOR.is_file(), reason="shared anchors not available")


@pytest.fixture(scope="module")
def anchor_report() -> FileReport:
    (report,) = validate_files([ANCHOR])
    return report


def _about(report: FileReport, scenario: str, text: str) -> list[Violation]:
    return [v for v in report.violations if v.scenario_id == scenario and text in v.render()]


@needs_anchor
def test_generator_file_counts_import_problems_and_rule_violations_apart(
    anchor_report: FileReport,
) -> None:
    assert anchor_report.error is None
    assert len(anchor_report.scenario_ids) == 50
    problems = Counter(v.rule.value for v in anchor_report.import_problems)
    assert problems == {"unresolved_name": 437, "duplicate_id": 11}
    rules = Counter(v.rule.value for v in anchor_report.rule_violations)
    assert rules == {"goal_shareability": 24}
    assert all(v.message.startswith("desired item ") for v in anchor_report.rule_violations)
    assert len(anchor_report.expertise_unchecked) == 50  # generator facts carry no domain
    first = [v for v in anchor_report.violations if v.scenario_id == "1"]
    assert [v.rule for v in first] == [Rule.GOAL_SHAREABILITY] * 3
    assert all(
        re.fullmatch(
            r"desired item '[a-z0-9-]+' would not be disclosed by any holder "
            r"\([^;]+ lists it in what_not_to_share\)",
            v.message,
        )
        for v in first
    )


@needs_anchor
def test_generator_file_duplicate_ids_are_listed(anchor_report: FileReport) -> None:
    duplicates = [v for v in anchor_report.violations if v.rule is Rule.DUPLICATE_ID]
    assert [v.scenario_id for v in duplicates] == [
        "16~2", "27~2", "28~2", "29~2", "27~3", "27~4", "27~5", "27~6", "27~7", "35~2", "42~2"
    ]  # fmt: skip
    assert duplicates[0].message == (
        "record #14 repeats scenario id '16' of an earlier record in this file; "
        "imported as '16~2'"
    )


@needs_anchor
def test_wolves_is_not_stemmed_and_its_unresolved_name_is_no_rule_violation(
    anchor_report: FileReport,
) -> None:
    wolves = _about(anchor_report, "36", "wolves")
    assert len(wolves) == 2 and {v.rule for v in wolves} == {Rule.UNRESOLVED_NAME}
    assert not any("wolve'" in v.render() or "wolve " in v.render() for v in wolves)


@needs_anchor
def test_withheld_private_report_is_not_flagged_reachable(anchor_report: FileReport) -> None:
    # The holders label the items private and withhold them under names that match no
    # single fact, so the cannot_know rule cannot claim they are left unwithheld.
    for scenario in ("43", "33"):
        assert not [
            v
            for v in anchor_report.violations
            if v.scenario_id == scenario and v.rule is Rule.CANNOT_KNOW_UNREACHABLE
        ]
    assert [v.rule for v in _about(anchor_report, "43", "complaints")] == [Rule.UNRESOLVED_NAME]


@needs_anchor
def test_paraphrased_name_is_not_forced_onto_a_fact(anchor_report: FileReport) -> None:
    found = _about(anchor_report, "41", "revenue numbers")
    assert [v.rule for v in found] == [Rule.UNRESOLVED_NAME]
    assert found[0].agent is not None and found[0].agent.startswith("Head of Enterprise")
    assert found[0].message.endswith("(no fact matches)")


def _unresolved(who: str, which: str, text: str) -> dict[str, str]:
    return {"agent": who, "list": which, "text": text, "reason": "no fact matches"}


def test_an_unresolved_withhold_entry_makes_unwithheld_uncertain() -> None:
    record = base()
    agent(record, BO)["what_not_to_share"] = []  # Bo no longer withholds "cuts"
    assert ("cannot_know_unreachable", ANA, "cuts") in [r[:3] for r in check(record)]
    record["unresolved_references"] = [_unresolved(BO, "what_not_to_share", "Staffing plans")]
    assert [r[:3] for r in check(record)] == [("unresolved_name", BO, "Staffing plans")]


def test_an_unresolved_share_entry_makes_unshared_uncertain() -> None:
    record = base()
    agent(record, BO)["what_to_share"] = []  # Bo no longer lists the budget Ana wants
    assert [r[0] for r in check(record)] == ["goal_shareability"]
    record["unresolved_references"] = [_unresolved(BO, "what_to_share", "Money we can spend")]
    assert [r[0] for r in check(record)] == ["unresolved_name"]
    assert Rule.UNRESOLVED_NAME.is_import and not Rule.GOAL_SHAREABILITY.is_import
