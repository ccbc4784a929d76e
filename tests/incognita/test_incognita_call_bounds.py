"""Incognita's call bounds (`envs/incognita/calls.py`) are tight: a
hand-computed case, a worst-case mock that reaches every bound exactly (so no bound can be
lowered), and every mock and reference lineup's episodes within them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from confide.core.benchmark import EPISODE_CALLS, SeatSpec
from confide.core.trace import ModelCall, Trace, read_trace, trace_files
from confide.envs.incognita.conditions import AGENT, CUSTOMER, TERMINAL
from confide.envs.incognita.env import load_tasks
from confide.envs.incognita.options import EnvOptions
from confide.llm import ChatMessage, GenerateConfig
from confide.llm.providers.mock import MockModel, Reply
from confide.llm.providers.mock_registry import mock_names, register_mock
from confide.llm.types import ToolCall
from confide.registry import get_benchmark
from confide.runner import build_experiment, run_experiment

SPEC = get_benchmark("incognita")
WITH_ASSERTIONS = "sd-05-return-whole-order"
WITHOUT_ASSERTIONS = "sd-01-cancel-blanket"
SMALL = EnvOptions(max_turns=4, desk_steps=2, max_attempts=2)
MODEL = "mock/m"
ALL_MODELS = {"customer": MODEL, "desk": MODEL, "judge": MODEL}


def _bounds(card_id: str, roles: dict[str, str], condition: str,
            options: EnvOptions = SMALL, seat: str = MODEL) -> dict[str, int | None]:
    task = next(t for t in load_tasks(None, None) if t.id == card_id)
    bounds = SPEC.call_bounds
    assert bounds is not None
    made = bounds(task, {"agent": SeatSpec(seat)}, roles, options, condition)
    return {key: bound.calls for key, bound in made.items()}


def test_bounds_by_hand() -> None:
    # T = 4 turns, S = 2 desk steps, A = 2 attempts: the agent 4 * 2, the customer one
    # call a turn, the gate 4 * 2, a desk 2 * 2 a turn, the judge 2 once; a turn goes to
    # the customer (2 + 1) or a desk (4), never both: 4 * (2 + 4) + 2 = 26, not the sum 34
    assert _bounds(WITH_ASSERTIONS, ALL_MODELS, "social") == {
        "agent": 8, "customer": 4, "gate": 8, "desk": 16, "judge": 2, EPISODE_CALLS: 26}
    # no output assertions: the judge is never asked
    assert _bounds(WITHOUT_ASSERTIONS, ALL_MODELS, "indirect") == {
        "agent": 8, "customer": 4, "gate": 8, "desk": 16, "judge": 0, EPISODE_CALLS: 24}
    # direct access has no desks: 4 * (2 + 2 + 1) + 2
    assert _bounds(WITH_ASSERTIONS, ALL_MODELS, "direct") == {
        "agent": 8, "customer": 4, "gate": 8, "judge": 2, EPISODE_CALLS: 22}
    # the native arm: no customer, gate or desk; the user opens and answers each turn:
    # 4 * (2 + 1) + 1 + 2
    with_user = {**ALL_MODELS, "user": MODEL}
    assert _bounds(WITH_ASSERTIONS, with_user, "native") == {
        "agent": 8, "user": 5, "judge": 2, EPISODE_CALLS: 15}
    # ... and the user role is used only there
    assert "user" not in _bounds(WITH_ASSERTIONS, with_user, "direct")
    # the gate bound to keywords, scripted desks, the literal judge, the reference agent
    roles = {"customer": MODEL, "gate": "keywords", "desk": "scripted", "judge": "literal"}
    assert _bounds(WITH_ASSERTIONS, roles, "social", seat="reference") == {
        "customer": 4, EPISODE_CALLS: 4}
    # the defaults: 300 * (3 + 8 * 3) + 3 = 8,103 where the parts sum to 9,303
    default = _bounds(WITH_ASSERTIONS, ALL_MODELS, "social", EnvOptions())
    assert default[EPISODE_CALLS] == 8103
    assert sum(v or 0 for k, v in default.items() if k != EPISODE_CALLS) == 9303


def _repairs(messages: list[ChatMessage]) -> int:
    """Attempts already made in this repair loop (failed attempts are never history)."""
    return sum(m.role == "user" and m.content.startswith("I could not use that reply")
               for m in messages)


def _worst(target: str, attempts: int) -> Any:
    """A model whose every reply is unusable until a loop's last attempt: the agent then
    messages `target` ("desk": the first desk), a desk calls a tool (so it takes every
    step), the customer answers; the gate and the judge never answer usably."""
    def reply(messages: list[ChatMessage], config: GenerateConfig) -> Reply:
        title = (config.response_schema or {}).get("title")
        last = _repairs(messages) == attempts - 1
        if title == "AgentTurn" and last:
            listed = config.response_schema["properties"]["recipient"]["enum"]  # type: ignore[index]
            to = CUSTOMER if target == CUSTOMER else next(
                r for r in listed if r not in (CUSTOMER, TERMINAL))
            return json.dumps({"recipient": to, "message": "hello", "message_type": "MESSAGE"})
        if title is None and config.tools:  # a desk step
            return ToolCall(id="w", name=config.tools[0].name, arguments="{}") if last else ""
        if title is None:  # the customer
            return "I see."
        return ""
    return lambda **_: MockModel(reply, name="worst", cycle=False)


def _run(tmp_path: Path, lineup: str, conditions: list[str], roles: dict[str, str],
         options: dict[str, int], cards: list[str]) -> list[Trace]:
    experiment = build_experiment({
        "benchmark": "incognita", "lineups": [lineup], "conditions": conditions,
        "roles": roles, "options": options, "task_ids": cards, "output_dir": str(tmp_path),
    })
    run_experiment(experiment, show_progress=False)
    return [read_trace(p) for p in trace_files(tmp_path / "traces")]


def _role(call: ModelCall, condition: str | None) -> str:
    if call.seat == AGENT:
        return "agent"
    if call.seat == CUSTOMER and condition == "native":
        return "user"
    if call.seat == CUSTOMER:
        return "gate" if call.purpose == "gate" else "customer"
    return "judge" if call.seat == "judge" else "desk"


@pytest.mark.parametrize(("condition", "target"), [("social", "desk"), ("indirect", "desk"),
                                                   ("direct", CUSTOMER), ("native", CUSTOMER)])
def test_a_worst_case_episode_reaches_every_bound(
    condition: str, target: str, tmp_path: Path
) -> None:
    name = f"incognita-worst-{target.lower()}"
    if name not in mock_names():
        register_mock(name, _worst(target, SMALL.max_attempts))
    model = f"mock/{name}"
    roles = {"customer": model, "user": model, "desk": model, "judge": model}
    options = SMALL.model_dump()
    [trace] = _run(tmp_path, model, [condition], roles, options, [WITH_ASSERTIONS])
    made = Counter(_role(call, condition) for call in trace.model_calls())
    bounds = _bounds(WITH_ASSERTIONS, roles, condition, seat=model)
    assert sum(made.values()) == bounds[EPISODE_CALLS]
    busy = ({"agent", "judge", "desk"} if target == "desk" else
            {"agent", "judge", "user"} if condition == "native" else
            {"agent", "judge", "customer", "gate"})
    assert made == {key: bounds[key] for key in busy}


LINEUPS = [
    ("reference", {}),
    ("mock/incognita", {"customer": "mock/incognita", "user": "mock/incognita",
                        "desk": "mock/incognita", "judge": "mock/incognita"}),
    ("mock/incognita-skilled", {"customer": "mock/incognita", "user": "mock/incognita",
                                "desk": "mock/incognita"}),
    ("mock/incognita-ineffective", {"judge": "mock/incognita"}),
    ("mock/incognita-prose", {"customer": "mock/incognita", "user": "mock/incognita",
                              "desk": "mock/incognita", "judge": "mock/incognita"}),
]


@pytest.mark.parametrize(("lineup", "roles"), LINEUPS, ids=[lineup for lineup, _ in LINEUPS])
def test_mock_and_reference_episodes_stay_within_the_bounds(
    lineup: str, roles: dict[str, str], tmp_path: Path
) -> None:
    options = {"max_turns": 40}
    cards = [WITH_ASSERTIONS, WITHOUT_ASSERTIONS]
    conditions = ["direct", "indirect", "social", "native"]
    traces = _run(tmp_path, lineup, conditions, roles, options, cards)
    assert len(traces) == 8
    for trace in traces:
        card, condition = trace.header.scenario_id, trace.header.condition
        assert condition is not None
        made = Counter(_role(call, condition) for call in trace.model_calls())
        bounds = _bounds(card, roles, condition, EnvOptions(**options), seat=lineup)
        for key, count in made.items():
            assert count <= (bounds[key] or 0), (condition, card, key, count, bounds)
        total = bounds[EPISODE_CALLS]
        assert total is not None and sum(made.values()) <= total
