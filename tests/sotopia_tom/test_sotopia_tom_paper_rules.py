"""Sotopia-ToM as the paper runs it: EFF's T_max is the 60-turn budget with A.7's median
cliff, a failed verdict is missing (never a zero), and every strategy prompt is the Basic
prompt plus its own part, stating the limits the environment enforces (5.3, A.7, A.9)."""

from __future__ import annotations

from typing import Any

import pytest

from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.actions import InfoObservation, TurnLimits, briefing_for
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.envs.sotopia_tom.metrics import efficiency, summarize
from confide.envs.sotopia_tom.participants import STRATEGIES
from confide.envs.sotopia_tom.prompts import render
from confide.llm import MockModel
from confide.llm.types import GenerateConfig
from confide.runner.models import RunModels
from confide.testing import run_once

S = load_scenario_by_id("core", "finance-sme-loan")


def test_eff_normalizes_by_the_turn_budget_and_keeps_the_median_cliff() -> None:
    assert efficiency([1, 1, 1], t_max=60) == 1.0
    assert efficiency([1, 2, None], t_max=60) == pytest.approx(1 - 1 / 59)  # median round 2
    assert efficiency([3, 4], t_max=60) == pytest.approx(1 - 2.5 / 59)
    # one of three items acquired in round 1: the median is "never" (T_max + 1) -> 0
    assert efficiency([1, None, None], t_max=60) == 0.0
    assert efficiency([None], t_max=60) == 0.0
    with pytest.raises(ValueError, match="at least 2 turns"):
        efficiency([1], t_max=1)


def test_a_failed_cpv_verdict_is_missing_not_zero() -> None:
    """mock/json answers every judge call with a minimal schema instance; the CPV verdict
    it gives cites nothing, so to make it fail the judge model returns non-JSON."""
    capture = run_once(
        SPEC,
        S,
        "reference",
        roles={"judge": "mock/is-not-json"},
        model_factory=_NotJson(),
    )
    result = capture.result
    assert result is not None
    metrics = result.metrics
    assert metrics["cpv"] is None and metrics["violations"] is None
    assert "cpv" in metrics["judge_failures"].split(",")
    row = {**result.rows[0], "episode_id": "e1", "status": "ok"}
    [entry] = summarize([row])
    assert entry["any_violation"] is None and entry["CPV"] is None
    assert entry["failed_verdicts"] == 1


class _NotJson(RunModels):
    """Every model is a mock that answers prose."""

    def __call__(self, *args: object, **kwargs: object) -> MockModel:
        return MockModel(["I think it went fine."], cycle=True, name="not-json")


LIMITS = TurnLimits(max_turns=45, stale_turns=4, leave_ends="all")


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_strategy_prompt_is_the_baseline_plus_its_own_part(strategy: str) -> None:
    model = MockModel(["{}"])
    extra: dict[str, Any] = {"tom-coach": {"coach": model}}.get(
        strategy, {"state_model": model} if strategy in ("tom-belief", "self-focused") else {}
    )
    agent = STRATEGIES[strategy](
        S.agent_names[0], model, emit=lambda _e: None, config=GenerateConfig(), **extra
    )
    observation = InfoObservation(
        agent=S.agent_names[0],
        round=1,
        turn=1,
        limits=LIMITS,
        briefing=briefing_for(S, S.agent_names[0]),
        history=[],
        first_new=0,
        present=tuple(S.agent_names),
    )
    prompt = agent.system_prompt(observation)
    baseline = render("basic.txt")
    assert "competent colleague" in baseline and "private messages" in baseline
    assert "leave the conversation" in baseline
    assert baseline in prompt  # the Basic prompt's guidance, verbatim
    if strategy != "basic":
        assert prompt.index(baseline) < prompt.index("BEFORE EVERY ACTION")
    # the numbers the agent is told are the ones the environment enforces
    assert "at most 45 turns" in prompt and "after 4 turns in a row" in prompt
    assert "once everyone has left" in prompt
