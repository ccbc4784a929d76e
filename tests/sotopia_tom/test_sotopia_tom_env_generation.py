"""The scenario generation pipeline (3.2, A.3, A.4, A.6) with mock generator and judge
models: seeds, acceptance, minimal-edit correction, rejections, outputs, determinism."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide.envs.sotopia_tom.cli.scenarios import app
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.envs.sotopia_tom.generation import (
    PAPER_SAMPLING,
    GenerationError,
    GenerationRecord,
    GenerationRequest,
    PipelineSettings,
    bad_seed,
    edit_fraction,
    generate_one,
    generate_with_specs,
    good_seeds,
    plan_requests,
    run_generation,
    sector_named,
)
from confide.envs.sotopia_tom.scenario import Scenario, Sector, load_scenario, scenario_to_json
from confide.envs.sotopia_tom.validation import validate_scenario
from confide.errors import ConfideError
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock

CLEAN = load_scenario_by_id("core", "healthcare-icu-transfer")  # 3 agents
FLAWED = bad_seed(Sector.HEALTHCARE).scenario  # the same scenario with an unreachable goal
REQUEST = GenerationRequest(sector=Sector.FINANCE, agents=3, scenario_id="gen-finance-001")

Reply = Callable[[list[ChatMessage], GenerateConfig], str]


def model(reply: Reply) -> MockModel:
    return MockModel(reply, name="gen")


def always(text: str) -> Reply:
    return lambda messages, config: text


def verdict(correct: bool, reason: str = "", corrected: Scenario | None = None) -> str:
    fixed = None if corrected is None else json.loads(scenario_to_json(corrected))
    return json.dumps(
        {"is_logically_correct": correct, "anomalies_reason": reason, "corrected_scenario": fixed}
    )


def generate(
    generator: Reply, judge: Reply, request: GenerationRequest = REQUEST, **settings: float
) -> GenerationRecord:
    return asyncio.run(
        generate_one(
            model(generator), model(judge), request, random.Random(0), PipelineSettings(**settings)
        )
    )


def test_every_sector_has_two_good_seeds_and_a_bad_seed_breaking_its_rule() -> None:
    for sector in Sector:
        assert len(good_seeds(sector)) == 2
        bad = bad_seed(sector)
        rules = {v.rule for v in validate_scenario(bad.scenario)}
        assert bad.recipe.rule in rules, sector
        assert 0 < edit_fraction(good_seeds(sector)[0], bad.scenario) < 0.1
        assert bad.recipe.reason


def test_a_clean_candidate_the_judge_accepts_is_accepted() -> None:
    record = generate(always(scenario_to_json(CLEAN)), always(verdict(True)))
    assert record.status == "accepted", record.reason
    assert record.scenario is not None and record.scenario.id == "gen-finance-001"
    assert record.scenario.sector is Sector.FINANCE and record.edit_fraction == 0.0
    assert record.good_seed in {s.id for s in good_seeds(Sector.FINANCE)}
    assert record.violations == [[]]


def test_a_minimal_correction_is_accepted() -> None:
    record = generate(
        always(scenario_to_json(FLAWED)), always(verdict(False, "goal unreachable", CLEAN))
    )
    assert record.status == "accepted", record.reason
    assert 0 < record.edit_fraction < 0.1
    assert record.judge_records[0].anomalies_reason == "goal unreachable"


def test_the_judge_gets_another_round_when_rules_still_fail() -> None:
    prompts: list[str] = []

    def judge(messages: list[ChatMessage], config: GenerateConfig) -> str:
        prompts.append(messages[-1].content)
        return verdict(True) if len(prompts) == 1 else verdict(False, "fixed", CLEAN)

    record = generate(always(scenario_to_json(FLAWED)), judge)
    assert record.status == "accepted" and len(record.judge_records) == 2
    assert "[goal_shareability]" in prompts[0] and "[goal_shareability]" in prompts[1]
    assert len(record.violations) == 2 and record.violations[1] == []


def test_rejections_say_why() -> None:
    wrong_count = generate(
        always(scenario_to_json(load_scenario_by_id("core", "technology-payments-release"))),
        always(verdict(True)),
    )
    assert wrong_count.status == "rejected" and "4 agents, 3 asked" in wrong_count.reason

    def echo_seed(messages: list[ChatMessage], config: GenerateConfig) -> str:
        text = messages[-1].content
        return text.split("(follow its structure and level of detail; do not copy its content):\n")[
            1
        ].split("\n\nBAD EXAMPLE")[0]

    copy = generate(echo_seed, always(verdict(True)))
    assert copy.status == "rejected" and "too close to good seed" in copy.reason

    refused = generate(always(scenario_to_json(CLEAN)), always(verdict(False, "no sense")))
    assert refused.reason == "judge rejected the candidate: no sense"

    stubborn = generate(always(scenario_to_json(FLAWED)), always(verdict(True)), max_corrections=1)
    assert stubborn.reason == "still breaks rules after 1 correction round(s)"

    garbage = generate(always("no json here"), always(verdict(True)), max_attempts=2)
    assert garbage.reason.startswith("generator output never matched the schema")

    bad_judge = generate(always(scenario_to_json(CLEAN)), always("{}"), max_attempts=1)
    assert bad_judge.reason.startswith("judge output never matched the schema")


def test_corrections_must_be_minimal_and_keep_the_agents() -> None:
    renamed = CLEAN.model_copy(
        update={
            "agents": (
                CLEAN.agents[0].model_copy(update={"name": "Someone Else"}),
                *CLEAN.agents[1:],
            )
        }
    )
    record = generate(always(scenario_to_json(FLAWED)), always(verdict(False, "x", renamed)))
    assert record.status == "rejected" and "changed the agents" in record.reason
    rewritten = load_scenario_by_id("core", "legal-mediation-prep")
    kept = rewritten.model_copy(
        update={
            "agents": tuple(
                a.model_copy(update={"name": c.name, "role": c.role})
                for a, c in zip(rewritten.agents, FLAWED.agents, strict=True)
            )
        }
    )
    record = generate(always(scenario_to_json(FLAWED)), always(verdict(False, "x", kept)))
    assert record.status == "rejected" and "not minimal" in record.reason


def test_run_generation_writes_accepted_scenarios_and_a_log(tmp_path: Path) -> None:
    requests = plan_requests([Sector.FINANCE, Sector.LEGAL], per_sector=2, agent_counts=(3, 4))
    assert [(r.scenario_id, r.agents) for r in requests] == [
        ("gen-finance-001", 3),
        ("gen-finance-002", 4),
        ("gen-legal-001", 3),
        ("gen-legal-002", 4),
    ]
    records = asyncio.run(
        run_generation(
            model(always(scenario_to_json(CLEAN))),
            model(always(verdict(True))),
            requests,
            tmp_path,
            seed=7,
        )
    )
    assert [r.status for r in records] == ["accepted", "rejected", "accepted", "rejected"]
    written = sorted(p.name for p in tmp_path.glob("*.json"))
    assert written == ["gen-finance-001.json", "gen-legal-001.json"]
    loaded = load_scenario(tmp_path / "gen-legal-001.json")
    assert loaded.sector is Sector.LEGAL and validate_scenario(loaded) == []
    log = (tmp_path / "generation_log.jsonl").read_text().splitlines()
    assert [GenerationRecord.model_validate_json(line) for line in log] == records
    again = asyncio.run(
        run_generation(
            model(always(scenario_to_json(CLEAN))),
            model(always(verdict(True))),
            requests,
            tmp_path / "again",
            seed=7,
        )
    )
    assert [r.good_seed for r in again] == [r.good_seed for r in records]


def test_plan_requests_validates_its_arguments() -> None:
    with pytest.raises(GenerationError, match="per_sector >= 1"):
        plan_requests([Sector.LEGAL], per_sector=0)
    with pytest.raises(GenerationError, match=r"in \[2, 8\], got \[1, 9\]"):
        plan_requests([Sector.LEGAL], per_sector=1, agent_counts=(1, 3, 9))


def test_sectors_are_named_by_value_name_or_slug() -> None:
    assert sector_named("Software/Technology") is Sector.TECHNOLOGY
    assert sector_named("technology") is Sector.TECHNOLOGY
    assert sector_named(" software-technology ") is Sector.TECHNOLOGY
    assert sector_named("FINANCE") is Sector.FINANCE
    with pytest.raises(GenerationError, match="unknown sector 'space'; use one of healthcare"):
        sector_named("space")


def test_silver_mode_reuses_rejected_candidates_as_bad_examples(tmp_path: Path) -> None:
    four = scenario_to_json(load_scenario_by_id("core", "technology-payments-release"))
    prompts: list[str] = []

    def generator(messages: list[ChatMessage], config: GenerateConfig) -> str:
        prompts.append(messages[-1].content)
        return four

    requests = plan_requests([Sector.FINANCE], per_sector=5, agent_counts=(3,))
    records = asyncio.run(
        run_generation(
            model(generator),
            model(always(verdict(True))),
            requests,
            tmp_path / "silver",
            seed=1,
            silver=True,
        )
    )
    assert all(r.status == "rejected" and r.candidate is not None for r in records)
    reused = [p for p in prompts if "Why it is bad: generator wrote 4 agents, 3 asked" in p]
    assert reused and "Why it is bad: generator wrote" not in prompts[0]
    prompts.clear()
    asyncio.run(
        run_generation(
            model(generator), model(always(verdict(True))), requests, tmp_path / "plain", seed=1
        )
    )
    assert not any("Why it is bad: generator wrote" in p for p in prompts)


def test_generation_runs_from_model_specs(tmp_path: Path) -> None:
    register_mock("is-gen", lambda **_: model(always(scenario_to_json(CLEAN))), replace=True)
    register_mock("is-gen-judge", lambda **_: model(always(verdict(True))), replace=True)
    try:
        records = asyncio.run(
            generate_with_specs("mock/is-gen", "mock/is-gen-judge", [REQUEST], tmp_path)
        )
    finally:
        unregister_mock("is-gen")
        unregister_mock("is-gen-judge")
    assert [r.status for r in records] == ["accepted"]
    assert (tmp_path / "gen-finance-001.json").is_file()


def test_cli_generate_runs_the_pipeline_with_mock_models(tmp_path: Path) -> None:
    four = scenario_to_json(load_scenario_by_id("core", "technology-payments-release"))
    register_mock("is-cli-gen", lambda **_: model(always(scenario_to_json(CLEAN))), replace=True)
    register_mock("is-cli-four", lambda **_: model(always(four)), replace=True)
    register_mock("is-cli-judge", lambda **_: model(always(verdict(True))), replace=True)
    runner = CliRunner()
    common = ["--judge", "mock/is-cli-judge", "--sector", "finance", "--sector", "Legal"]
    try:
        result = runner.invoke(
            app,
            ["generate", "--generator", "mock/is-cli-gen", *common, "--per-sector", "2",
             "--agents", "3", "--agents", "4", "--seed", "7", "--out", str(tmp_path / "a")],
        )
        silver = runner.invoke(
            app,
            ["generate", "--generator", "mock/is-cli-four", *common, "--agents", "3",
             "--silver", "--prefix", "s", "--out", str(tmp_path / "b")],
        )
    finally:
        for name in ("is-cli-gen", "is-cli-four", "is-cli-judge"):
            unregister_mock(name)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "gen-finance-001: accepted",
        "gen-finance-002: rejected: generator wrote 3 agents, 4 asked",
        "gen-legal-001: accepted",
        "gen-legal-002: rejected: generator wrote 3 agents, 4 asked",
        f"2 of 4 scenario(s) accepted; written to {tmp_path / 'a'}, "
        f"log {tmp_path / 'a' / 'generation_log.jsonl'}",
    ]
    written = sorted(p.name for p in (tmp_path / "a").glob("*.json"))
    assert written == ["gen-finance-001.json", "gen-legal-001.json"]
    log = (tmp_path / "a" / "generation_log.jsonl").read_text().splitlines()
    records = [GenerationRecord.model_validate_json(line) for line in log]
    direct = asyncio.run(
        run_generation(
            model(always(scenario_to_json(CLEAN))),
            model(always(verdict(True))),
            plan_requests([Sector.FINANCE, Sector.LEGAL], 2, (3, 4)),
            tmp_path / "direct",
            seed=7,
        )
    )
    assert records == direct
    assert silver.exit_code == 0, silver.output
    assert silver.output.splitlines()[:2] == [
        "s-finance-001: rejected: generator wrote 4 agents, 3 asked",
        "s-legal-001: rejected: generator wrote 4 agents, 3 asked",
    ]


def test_cli_generate_rejects_an_unknown_sector(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["generate", "--generator", "mock/x", "--judge", "mock/x", "--sector", "space",
         "--out", str(tmp_path)],
    )
    assert isinstance(result.exception, GenerationError)
    assert "unknown sector 'space'" in str(result.exception)
    assert not tmp_path.joinpath("generation_log.jsonl").exists()


def test_generator_and_judge_take_sampling_settings(tmp_path: Path) -> None:
    """The paper's settings (section 3.2, A.4: generator at low effort, judge at high)
    reach every request, over the pipeline's temperatures; a typo is refused up front."""
    seen: dict[str, list[GenerateConfig]] = {"gen": [], "judge": []}

    def recorded(who: str, text: str) -> Callable[..., MockModel]:
        def reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
            seen[who].append(config)
            return text
        return lambda **_: MockModel(reply, name=who)

    register_mock("is-s-gen", recorded("gen", scenario_to_json(CLEAN)), replace=True)
    register_mock("is-s-judge", recorded("judge", verdict(True)), replace=True)
    try:
        result = CliRunner().invoke(app, [
            "generate", "--generator", "mock/is-s-gen", "--judge", "mock/is-s-judge",
            "--sector", "finance", "--agents", "3", "--out", str(tmp_path / "a"),
            "--sampling", "generator.reasoning_effort=low",
            "--sampling", "judge.reasoning_effort=high", "--sampling", "judge.seed=5",
        ])
        typo = CliRunner().invoke(app, [
            "generate", "--generator", "mock/is-s-gen", "--judge", "mock/is-s-judge",
            "--out", str(tmp_path / "b"), "--sampling", "generater.temperature=1",
        ])
        bad = CliRunner().invoke(app, [
            "generate", "--generator", "mock/is-s-gen", "--judge", "mock/is-s-judge",
            "--out", str(tmp_path / "c"), "--sampling", "judge.reasoning_effort=huge",
        ])
    finally:
        unregister_mock("is-s-gen")
        unregister_mock("is-s-judge")
    assert result.exit_code == 0, result.output
    assert seen["gen"] and seen["judge"]
    assert {(c.reasoning_effort, c.temperature, c.seed) for c in seen["gen"]} == {
        ("low", 0.7, None)}
    assert {(c.reasoning_effort, c.temperature, c.seed) for c in seen["judge"]} == {
        ("high", 0.0, 5)}
    assert isinstance(typo.exception, ConfideError) and "'generater'" in str(typo.exception)
    assert isinstance(bad.exception, ConfideError)
    assert "--sampling judge: reasoning_effort" in str(bad.exception)
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
    assert PipelineSettings().sampled(PAPER_SAMPLING).generator_config.reasoning_effort == "low"
