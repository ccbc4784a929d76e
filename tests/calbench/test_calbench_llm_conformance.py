"""The conformance checker (`confide.testing.check_env`: determinism, structural and
content no-leak, trace round-trip) on CalBench games with LLM seats, models built by the
run's `RunModels` factory: `mock/json` in every condition, and a random stateless mock
in a mixed lineup with IMAP."""

from __future__ import annotations

import pytest
from test_calbench_llm_support import LLM_SPEC, RandomAgents, model_calls, registered_mock

from confide.envs.calbench.actions import CONDITIONS
from confide.envs.calbench.generator import hydrate_labels
from confide.envs.calbench.labels import load_label_bank
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import DATA_DIR, load_suite
from confide.runner.models import RunModels
from confide.testing import check_env


def _tiny(index: int) -> Scenario:
    bank = load_label_bank(DATA_DIR / "label_bank_v1.json")
    return hydrate_labels(load_suite("tiny")[index], bank)


@pytest.mark.parametrize("condition", CONDITIONS)
def test_mock_json_lineup_conforms(condition: str) -> None:
    capture = check_env(
        LLM_SPEC, _tiny(0), "mock/json", model_factory=RunModels(), condition=condition
    )
    assert capture.result is not None and len(capture.result.rows) == 3
    # mock/json passes every step: each DECISION batch is rejected until retries run out.
    assert model_calls(capture.trace)


def test_random_mixed_lineup_conforms() -> None:
    task = _tiny(3)
    with registered_mock("cal-llm-conformance", RandomAgents(11, 3, task.num_slots)) as model:
        capture = check_env(
            LLM_SPEC,
            task,
            f"{model},imap,{model}",
            model_factory=RunModels(),
            condition="all-agent-groupchat",
            options={"max_turns_per_round": 3},
        )
    seats = {call.seat for call in model_calls(capture.trace)}
    assert seats == {"agent0", "agent2"}
