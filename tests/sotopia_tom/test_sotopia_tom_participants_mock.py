"""Each prompting strategy (section 5.3, A.9, A.14) runs end to end with a mock model; the
ToM-Belief / Self-Focused state is updated from new messages only and persisted in the
trace turn by turn; reasoning never reaches other agents; typed failures are recorded."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from confide.core.trace import EnvEvent, ModelCall
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.errors import ConfideError
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.llm.providers.json_instance import minimal_instance
from confide.runner.models import RunModels
from confide.testing import check_env, run_once
from confide.testing.conformance import Capture

S = load_scenario_by_id("core", "finance-sme-loan")
N, B, F = S.agent_names
REASONING = "PRIVATE-REASONING-MARKER"
NAME = re.compile(r"(?:You are|adviser to|working memory of) (.+?), the ")


def first_other(prompt: str, me: str) -> str:
    section = prompt.split("PEOPLE IN THE CONVERSATION (name | role)\n")[1]
    names = [line[2:].split(" | ")[0] for line in section.splitlines() if line.startswith("- ")]
    return next(n for n in names if n != me)


def state_reply(schema: dict[str, Any], prompt: str) -> dict[str, Any]:
    """Keeps the previous memory and adds one event per new message line."""
    state: dict[str, Any] = minimal_instance(schema)
    state["progress"]["objective_status"] = "in progress"
    if "CURRENT STATE\n" in prompt:
        current = prompt.split("CURRENT STATE\n")[1].split("\n\nNEW MESSAGES")[0]
        if current.startswith("{"):
            state["memory"] = json.loads(current)["memory"]
        new = prompt.split("NEW MESSAGES\n")[1]
        state["memory"] += [
            {"round": int(line[2 : line.index(".")]), "event": line}
            for line in new.splitlines()
            if line.startswith("[R")
        ]
    return state


def agent_reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """Round 1: greet publicly; round 2: DM the first other participant; then leave."""
    schema = config.response_schema or {}
    prompt = "\n".join(m.content for m in messages)
    match = NAME.search(prompt)
    assert match is not None, prompt[:200]
    me = match.group(1)
    title = schema.get("title")
    if title in ("BeliefState", "SelfFocusedState"):
        return json.dumps(state_reply(schema, prompt))
    reply: dict[str, Any] = minimal_instance(schema)
    if title == "CoachNote":
        reply["recommendation"] = f"{me} should greet everyone"
        return json.dumps(reply)
    for key, value in reply.items():
        if isinstance(value, str):
            reply[key] = REASONING
    rnd = int(re.findall(r"It is round (\d+)", prompt)[-1])
    if rnd == 1:
        reply["action"] = {"action_type": "speak", "to": [], "content": f"Hello, I am {me}."}
    elif rnd == 2:
        other = first_other(prompt, me)
        reply["action"] = {"action_type": "speak", "to": [other], "content": f"{me} to {other}"}
    else:
        reply["action"] = {"action_type": "leave"}
    return json.dumps(reply)


@pytest.fixture(autouse=True)
def mocks() -> Iterator[None]:
    register_mock("is-agent", lambda **_: MockModel(agent_reply, name="is-agent"), replace=True)
    register_mock(
        "is-broken", lambda **_: MockModel(["not json"], cycle=True, name="is-broken"), replace=True
    )
    yield
    unregister_mock("is-agent")
    unregister_mock("is-broken")


TYPED_JUDGE = {"judge": "reference"}


def run(lineup: str, **options: Any) -> Capture:
    """One episode; everyone leaves in round 3, so `leave_ends=all` lets each agent play
    three turns (the first-leave stop itself is tested in test_sotopia_tom_env_routing)."""
    options.setdefault("leave_ends", "all")
    # the mock agents send typed payloads, which the reference judge scores exactly; it must
    # be bound explicitly for a lineup with model seats
    return run_once(SPEC, S, lineup, model_factory=RunModels(), options=options,
                    roles=TYPED_JUDGE)


def events(capture: Capture, name: str) -> list[EnvEvent]:
    return [e for e in capture.trace.events if isinstance(e, EnvEvent) and e.name == name]


def calls(capture: Capture) -> list[ModelCall]:
    return [e for e in capture.trace.events if isinstance(e, ModelCall)]


@pytest.mark.parametrize(
    ("strategy", "purposes"),
    [
        ("basic", ["act"]),
        ("cot-privacy", ["act"]),
        ("tom-coach", ["coach", "act"]),
        ("tom-belief", ["belief", "act"]),
        ("self-focused", ["plan", "act"]),
    ],
)
def test_each_strategy_runs_end_to_end(strategy: str, purposes: list[str]) -> None:
    capture = run(f"mock/is-agent:{strategy}")
    result = capture.result
    assert result is not None
    assert result.final_state["left"] == {N: 3, B: 3, F: 3}
    assert result.metrics["end_reason"] == "left" and result.metrics["rounds"] == 3
    messages = [e.message for e in capture.trace.events if e.kind == "message"]
    assert [m.text for m in messages[:3]] == [f"Hello, I am {n}." for n in (N, B, F)]
    assert [(m.sender, m.recipients) for m in messages[3:]] == [(N, (B,)), (B, (N,)), (F, (N,))]
    assert all(REASONING not in (m.text or "") for m in messages)
    assert {r["strategy"] for r in result.rows} == {strategy}
    seen = [c.purpose for c in calls(capture) if c.seat == N]
    assert seen[: len(purposes)] == purposes  # coach note or state init, then the act
    assert set(seen) == set(purposes)


def test_tom_belief_state_is_updated_from_new_messages_and_persisted_per_turn() -> None:
    capture = run("mock/is-agent:tom-belief", memory_size=4)
    states = events(capture, "belief_state")
    assert [(e.seat, e.round) for e in states] == [(n, r) for r in (1, 2, 3) for n in (N, B, F)]
    assert all(e.visible_to == [e.seat] and e.data.ok for e in states)
    phases = {(e.seat, e.round): e.data.phase for e in states}
    assert phases[(N, 1)] == "init" and phases[(B, 1)] == "init+update"
    assert phases[(N, 2)] == "update"
    messages = [e.message for e in capture.trace.events if e.kind == "message"]
    for name in (N, B, F):
        processed = [i for e in states if e.seat == name for i in e.data.new_messages]
        visible = [m.id for m in messages if m.visible_to(name) and m.round < 3]
        assert processed == visible, name  # every message it saw, once, in order
    updates = [c for c in calls(capture) if c.purpose == "belief" and c.seat == F]
    last = updates[-1].messages[-1]["content"]
    new_part = last.split("NEW MESSAGES\n")[1]
    # only what happened since Fiona's previous update: her own DM (she saw no other)
    assert new_part == f"[R2.3] You -> {N} (private): {F} to {N}"
    # the state it revises is the one kept after round 2, as compact JSON
    current = last.split("CURRENT STATE\n")[1].split("\n\nNEW MESSAGES")[0]
    before = next(e.data.state for e in states if (e.seat, e.round) == (F, 2))
    assert "\n" not in current and json.loads(current) == before
    final = states[-1].data.state
    assert len(final["memory"]) == 4  # bounded
    assert final["memory"][-1]["event"].startswith("[R2.")
    assert final["progress"]["objective_status"] == "in progress"


def test_self_focused_keeps_a_plan_instead_of_beliefs() -> None:
    capture = run("mock/is-agent:self-focused")
    states = events(capture, "planning_state")
    assert len(states) == 9 and not events(capture, "belief_state")
    assert set(states[0].data.state) == {"plan", "progress", "memory", "privacy_risks"}
    prompts = [c.messages[0]["content"] for c in calls(capture) if c.purpose == "act"]
    assert all("mental_states" not in p for p in prompts)


def test_tom_coach_is_stateless_and_sees_only_its_agents_view() -> None:
    capture = run("mock/is-agent:tom-coach")
    notes = events(capture, "coach_note")
    assert [(e.seat, e.round) for e in notes] == [(n, r) for r in (1, 2, 3) for n in (N, B, F)]
    fiona_coach = [c for c in calls(capture) if c.purpose == "coach" and c.seat == F]
    last = fiona_coach[-1].messages[0]["content"]
    assert f"{N} to {B}" not in last and f"{B} to {N}" not in last  # DMs Fiona never saw
    assert f"{F} to {N}" in last and "Hello, I am" in last
    act = [c for c in calls(capture) if c.purpose == "act" and c.seat == F][-1]
    assert "ADVICE FROM YOUR PRIVATE COACH" in act.messages[-1]["content"]
    assert "Fiona MacLeod should greet everyone" in act.messages[-1]["content"]


def test_unusable_output_is_a_typed_failure_and_counts_as_none() -> None:
    capture = run("mock/is-broken:cot-privacy", repair_attempts=2)
    failures = events(capture, "invalid_output")
    assert len(failures) == 3 and all("not valid JSON" in e.data.error for e in failures)
    # three unusable turns in a row are three quiet turns: the paper's early stop
    assert capture.result is not None and capture.result.metrics["end_reason"] == "stale"
    assert len(calls(capture)) == 3 * 2  # bounded repair: two calls per turn
    plain = run("mock/is-broken:cot-privacy")
    assert len(calls(plain)) == 3  # by default no repair: one call per turn (section 5.3)
    coach = run("mock/is-broken:tom-belief", repair_attempts=1)
    states = events(coach, "belief_state")
    assert states[0].data.state is None and not states[0].data.ok


def test_mixed_lineup_and_unknown_strategy() -> None:
    capture = run("reference,mock/is-agent:basic,mock/is-agent:tom-belief")
    assert capture.result is not None
    labels = [(r["model"], r["strategy"]) for r in capture.result.rows]
    assert labels == [
        ("reference", "-"),
        ("mock/is-agent", "basic"),
        ("mock/is-agent", "tom-belief"),
    ]
    with pytest.raises(ConfideError, match="unknown strategy 'tom-magic'"):
        run("mock/is-agent:tom-magic")
    with pytest.raises(ConfideError, match="unknown participant 'oracle'"):
        run("oracle")


def test_model_lineup_is_conformant() -> None:
    check_env(SPEC, S, "mock/is-agent:tom-belief", model_factory=RunModels(), roles=TYPED_JUDGE)


def test_a_model_lineup_without_a_bound_judge_is_refused() -> None:
    with pytest.raises(ConfideError, match="needs --role judge=<provider/model>"):
        run_once(SPEC, S, "mock/is-agent:basic", model_factory=RunModels())
