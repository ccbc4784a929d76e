"""Every number a CalBench model seat reads is the number the engine plays by: for each shipped
suite and each prompt variant, a game is played by scripted
model seats that keep talking (so every turn of the budget is rendered) and never send a
valid batch (so every retry is rendered), and each number in every system prompt and user
message is checked against the limits the engine recorded in `game_start`."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from test_calbench_llm_support import (
    PASS,
    agent_in,
    env_events,
    model_calls,
    registered_mock,
    run_llm_episode,
)

from confide.envs.calbench.env import DEFAULT_LABEL_BANK
from confide.envs.calbench.prompts import ADVERSARIAL_VARIANTS
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import load_suite, suite_names
from confide.llm import ChatMessage, GenerateConfig

VARIANTS = ("", *(f":{v}" for v in ADVERSARIAL_VARIANTS))


def _talker(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """A dm to the next agent on every CHEAP_TALK turn, an empty batch otherwise."""
    if "CHEAP_TALK" not in messages[-1].content:
        return PASS
    agent = agent_in(messages)
    system = messages[0].content
    num_agents = int(re.search(r"\((\d+) in all\)", system).group(1))  # type: ignore[union-attr]
    to = (agent + 1) % num_agents
    return json.dumps({"thinking": "", "actions": [{"type": "dm", "to": to, "content": "hi"}]})


def _check_game(task: Scenario, options: dict[str, Any]) -> dict[str, int]:
    lineup = ",".join(
        f"mock/cal-limits{VARIANTS[a % len(VARIANTS)]}" for a in range(task.num_agents)
    )
    with registered_mock("cal-limits", _talker):
        _, trace = run_llm_episode(task, lineup, options=options)
    (start,) = env_events(trace, "game_start")
    retries = start.data.decision_retries
    turns = start.data.max_turns_per_round
    seen = {"system": 0, "turn": 0, "attempts": 0, "retry": 0}
    for prompt in env_events(trace, "agent_prompt"):
        text = prompt.data.system_prompt
        more = re.findall(r"up to (\d+) more time", text)
        assert more == ([str(retries)] if retries else []), (task.task_id, more, retries)
        assert ("cannot be sent again" in text) == (retries == 0)
        assert f"has {task.num_slots} slots, numbered 0 to {task.num_slots - 1}" in text
        assert f"({task.num_agents} in all)" in text
        seen["system"] += 1
    for call in model_calls(trace):
        text = call.messages[-1]["content"]
        for turn, limit in re.findall(r"Turn (\d+) of at most (\d+)", text):
            assert int(limit) == turns and 1 <= int(turn) <= turns
            seen["turn"] += 1
        for attempts in re.findall(r"You have (\d+) attempt", text):
            assert int(attempts) == retries + 1
            seen["attempts"] += 1
        for attempt, limit in re.findall(r"attempt (\d+) of (\d+)", text):
            assert int(limit) == retries + 1 and 2 <= int(attempt) <= retries + 1
            seen["retry"] += 1
        for _, total in re.findall(r"meeting (\d+) of (\d+)", text):
            assert int(total) == len(task.meetings)
    return seen


@pytest.mark.parametrize("suite", suite_names())
def test_every_prompt_number_matches_the_engine_limits(suite: str) -> None:
    task = load_suite(suite, label_bank=DEFAULT_LABEL_BANK)[0]
    seen = _check_game(task, {})
    # every kind of number was rendered at least once, so the checks above bite
    assert seen["system"] == task.num_agents and seen["turn"] > 0 and seen["attempts"] > 0
    assert seen["retry"] > 0 or task.decision_retries == 0


def test_the_tiny_suite_states_its_own_retry_budget() -> None:
    """The bug this guards: `tiny` allows one retry but its prompt said three."""
    task = load_suite("tiny")[0]
    assert task.decision_retries == 1
    with registered_mock("cal-limits", _talker):
        _, trace = run_llm_episode(task, "mock/cal-limits")
    for prompt in env_events(trace, "agent_prompt"):
        assert "up to 1 more time(s)" in prompt.data.system_prompt


@pytest.mark.parametrize("options", [{"decision_retries": 0}, {"max_turns_per_round": 1},
                                     {"decision_retries": 2, "max_turns_per_round": 3}])
def test_explicit_options_win_in_the_prompts_too(options: dict[str, Any]) -> None:
    task = load_suite("tiny")[0]
    _check_game(task, options)
