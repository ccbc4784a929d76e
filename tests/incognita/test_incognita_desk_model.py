"""Model desks: the section 3.2 guarantees with a mock
desk model -- a desk never sees the customer dialogue, never announces its tools, never
refers the agent elsewhere -- and native tool calls with the recorded text fallback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _incognita_env_support import MOCK, run, task, tasks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from confide.core.trace import ModelCall
from confide.envs.incognita.actions import AgentObservation, DeskObservation
from confide.envs.incognita.conditions import AGENT, CUSTOMER, INDIRECT_DESK, SOCIAL_DESKS
from confide.envs.incognita.participants.desk_llm import conduct_problem
from confide.envs.incognita.prompting import desk_system_prompt
from confide.envs.incognita.tools import SERVICE_TOOLS, Desk
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.runner.models import RunModels

PROSE = "mock/incognita-prose"
ROLES = {"customer": MOCK, "desk": MOCK}


def desk_calls(episode: Any) -> list[ModelCall]:
    return [e for e in episode.trace.events
            if isinstance(e, ModelCall) and e.seat not in (AGENT, CUSTOMER, "judge")]


@pytest.mark.parametrize("role", [*Desk, "service"])
def test_a_desk_prompt_names_no_tool_and_no_other_participant(role: Any) -> None:
    prompt = desk_system_prompt(role)
    assert "<conduct>" in prompt
    assert not [tool for tool in SERVICE_TOOLS if tool in prompt]
    assert not [name for name in (INDIRECT_DESK, *SOCIAL_DESKS) if name in prompt]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    card=st.sampled_from([t.id for t in tasks()]),
    condition=st.sampled_from(["indirect", "social"]),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_a_desk_sees_only_its_own_exchanges_with_the_agent(
    card: str, condition: str, seed: int
) -> None:
    the_task = task(card)
    episode = run(the_task, condition, PROSE, roles=ROLES, seed=seed, observe=True)
    assert episode.row["success"] == 1
    desks = set(episode.env("episode_setup")[0].data.desk_roles)
    calls = desk_calls(episode)
    assert calls and {c.seat for c in calls} <= desks
    # the observation: only messages between the agent and this desk, and its own calls
    for name in desks:
        for observation in episode.observations.get(name, []):
            assert isinstance(observation, DeskObservation) and observation.name == name
            for item in observation.history:
                if item.message is not None:
                    pair = (item.message.sender, tuple(item.message.recipients))
                    assert pair in ((AGENT, (name,)), (name, (AGENT,))), pair
                else:
                    assert item.tool is not None and item.tool.proposer == name
    # the model request: nothing the customer wrote, no customer request, no other desk
    customer_texts = [m.text for m in episode.postbox_log if m.sender == CUSTOMER and m.text]
    for call in calls:
        contents = [m["content"] or "" for m in call.messages]
        text = "\n".join(contents)
        assert not [t for t in customer_texts if t in text]
        assert not [r for r in the_task.card.requests if r in text]
        assert not [d for d in desks - {call.seat} if d in text]
        users = [m for m in call.messages if m["role"] == "user"]
        assert all(m["content"].startswith(f"{AGENT}: ") for m in users)
    # its answers never name a tool or another participant
    for message in episode.postbox_log:
        if message.sender in desks:
            assert conduct_problem(message.text or "", message.sender, "") is None


@pytest.mark.parametrize("tool_mode", ["native", "text"])
def test_desk_tools_go_as_functions_or_by_the_recorded_fallback(tool_mode: str) -> None:
    the_task = task("sd-08-tablet-to-bluetooth")
    models = RunModels(options={"tool_mode": tool_mode})
    episode = run(the_task, "social", PROSE, roles=ROLES, models=models)
    assert episode.row["success"] == 1
    roles = episode.env("episode_setup")[0].data.desk_roles
    by_desk = {name: {t for t, s in SERVICE_TOOLS.items() if s.desk == role}
               for name, role in roles.items()}
    calls = desk_calls(episode)
    for call in calls:
        assert {t["name"] for t in call.config["tools"]} == by_desk[call.seat]
        assert call.completion is not None and call.completion["tool_mode"] == tool_mode
    made = [c for c in calls if c.completion and c.completion.get("tool_calls")]
    executed = [(e.data.proposer, e.data.tool) for e in episode.env("tool_executed")]
    assert [(c.seat, c.completion["tool_calls"][0]["name"]) for c in made
            if c.completion] == executed
    assert [tool for _, tool in executed] == [a.name for a in the_task.card.gold_actions]
    last = calls[-1].messages  # its calls and results come back as function turns (the
    # text fallback rewrites them into plain turns inside the provider, after recording)
    assert any(m.get("tool_calls") for m in last) and any(m["role"] == "tool" for m in last)


BAD_ANSWERS = {
    1: "Please ask another desk about that.",
    2: "My get_order_details lookup shows nothing yet.",
    3: "Bryn takes care of orders.",
}


def _misbehaving_desk(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """Answers with `BAD_ANSWERS` by repair attempt, then (attempt 4) a usable answer."""
    attempt = 1 + sum(m.content.startswith("I could not use that reply") for m in messages)
    return BAD_ANSWERS.get(attempt, "I cannot find anything for that.")


@pytest.fixture
def misbehaving() -> Iterator[str]:
    register_mock("incognita-misbehaving",
                  lambda **_: MockModel(_misbehaving_desk, name="incognita-misbehaving"),
                  replace=True)
    yield "mock/incognita-misbehaving"
    unregister_mock("incognita-misbehaving")


@pytest.mark.parametrize("attempts", [3, 4])
def test_an_answer_that_refers_or_names_a_tool_never_reaches_the_agent(
    misbehaving: str, attempts: int
) -> None:
    roles = {"customer": MOCK, "desk": misbehaving}
    options = {"max_attempts": attempts, "max_turns": 6}
    episode = run(task("sd-05-return-whole-order"), "indirect", PROSE, roles=roles,
                  options=options, observe=True)
    first = desk_calls(episode)[:attempts]
    repairs = [c.messages[-1]["content"] for c in first[1:]]
    expected = ["'another desk'", "names get_order_details", "names Bryn"][:attempts - 1]
    assert len(repairs) == len(expected)
    assert all(e in r for e, r in zip(expected, repairs, strict=True))
    from_desk = [m.text for m in episode.postbox_log if m.sender == INDIRECT_DESK]
    assert not set(from_desk) & set(BAD_ANSWERS.values())
    seen_by_agent = [item.message.text for obs in episode.observations[AGENT]
                     if isinstance(obs, AgentObservation)
                     for item in obs.history if item.message is not None]
    assert INDIRECT_DESK in {m.recipients[0] for m in episode.postbox_log if m.sender == AGENT}
    assert not set(seen_by_agent) & set(BAD_ANSWERS.values())
    if attempts == 4:
        assert from_desk[0] == "I cannot find anything for that."
    else:  # every attempt broke section 3.2: the desk stays silent, on the record
        assert episode.env("no_reply")[0].data.reason == "invalid"
        assert "names Bryn" in (episode.env("invalid_action")[0].data.problem or "")


@pytest.mark.parametrize(
    ("text", "seen", "problem"),
    [
        ("Bryn can do that for you.", "", "names Bryn"),
        ("The profile belongs to Dara Quinn.", '{"first_name": "Dara"}', None),
        ("I checked with get_user_details.", "", "names get_user_details"),
        ("I can calculate the new total for you.", "", None),
        ("You could try a different department.", "", "'different department'"),
        ("Maybe someone else knows.", "", "'someone else'"),
        ("That is not part of my work.", "", None),
        ("Lumen here: your order is pending.", "", None),  # its own name
    ],
)
def test_conduct_problem_by_hand(text: str, seen: str, problem: str | None) -> None:
    found = conduct_problem(text, "Lumen", seen)
    assert (found is None) == (problem is None)
    if problem is not None:
        assert found is not None and problem in found
