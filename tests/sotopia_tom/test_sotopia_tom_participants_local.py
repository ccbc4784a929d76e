"""An LLM strategy end to end with the embedded `local/smollm2` model, offline, on one
scenario. SmolLM2-135M rarely produces a usable action, which is fine: the point is that
real model output goes through prompts, constrained decoding, repair, typed failures,
judging and scoring without error. Two model calls (the model sits in one seat for two
rounds) keep it short; still slow on a busy machine, hence also marked `slow`."""

from __future__ import annotations

import pytest

from confide.core.trace import EnvEvent, ModelCall
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.runner.models import RunModels
from confide.testing import run_once

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def test_basic_strategy_with_smollm2_offline() -> None:
    scenario = load_scenario_by_id("core", "technology-data-migration")
    seat = scenario.agent_names[0]
    capture = run_once(
        SPEC,
        scenario,
        "local/smollm2:basic,reference,reference",
        model_factory=RunModels(options={"n_threads": 2}),
        roles={"judge": "reference"},  # scores typed payloads only: enough for this smoke test
        options={"max_turns": 6, "max_tokens": 48, "repair_attempts": 1},
    )
    result = capture.result
    assert result is not None and result.metrics["turns"] <= 6
    calls = [e for e in capture.trace.events if isinstance(e, ModelCall)]
    # one call per turn of its seat (no repair, no re-ask): at most 2 in 6 turns of 3 seats
    assert 1 <= len(calls) <= 2
    assert {(c.seat, c.purpose, c.model) for c in calls} == {(seat, "act", "local/smollm2")}
    assert all(c.completion is not None and c.error is None for c in calls)
    refused = [
        e
        for e in capture.trace.events
        if isinstance(e, EnvEvent) and e.name in ("invalid_output", "invalid_recipients")
    ]
    spoken = [e for e in capture.trace.events if e.kind == "message" and e.message.sender == seat]
    assert len(spoken) + len([e for e in refused if e.name == "invalid_output"]) <= 2
    assert all(result.metrics[k] is not None for k in ("da", "ia", "eff", "cpv", "infomgmt"))
