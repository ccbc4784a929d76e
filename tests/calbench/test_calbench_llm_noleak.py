"""No-leak over randomized LLM-agent games (the CalBench paper §A.1 hydration rules, A.3 routing,
A.5 thinking never forwarded), read back from the prompts recorded in the trace: no agent's
prompt ever holds another agent's private label or calendar lines, a message that was not
delivered to it, or another agent's thinking; a meeting's private label reaches only its
participants. Agents answer with random tool calls (some invalid, some malformed) whose
texts are unique tokens, so any token in a prompt can be traced to its origin."""

from __future__ import annotations

import re
from functools import cache

import pytest
from test_calbench_llm_support import (
    RandomAgents,
    agent_in,
    model_calls,
    prompt_text,
    registered_mock,
    run_llm_episode,
)

from confide.core.trace import MessageDelivered, TraceRecorder
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.generator import hydrate_labels
from confide.envs.calbench.labels import load_label_bank
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import DATA_DIR, load_suite
from confide.envs.calbench.world import Errand
from confide.llm import ChatMessage

BANK = DATA_DIR / "label_bank_v1.json"
TOKEN = re.compile(r"(msg|thought)-(\d+)-(\d+)-(\d+)")


def _visible_labels(task: Scenario, agent: int) -> set[str]:
    """Label texts `agent` may see: its own errands' and those of meetings it attends."""
    texts = task.private_texts()
    seen = {
        texts[item.label_id]
        for item in task.calendars[agent]
        if item is not None and item.label_id is not None
    }
    seen |= {
        texts[m.label_id]
        for m in task.meetings
        if m.label_id is not None and agent in m.participants
    }
    return seen


def _check_no_leaks(task: Scenario, trace: TraceRecorder) -> int:
    """Assert the no-leak properties; the number of prompts checked."""
    texts = task.private_texts()
    delivered = [e.message for e in trace.events if isinstance(e, MessageDelivered)]
    errand_lines = {
        agent: [
            f"errand #{item.errand_id} ("
            for item in task.to_calendars()[agent].slots
            if isinstance(item, Errand)
        ]
        for agent in range(task.num_agents)
    }
    checked = 0
    for call in model_calls(trace):
        assert call.seat is not None
        me = agent_of(call.seat)
        assert agent_in([ChatMessage.model_validate(m) for m in call.messages]) == me
        prompt = prompt_text(call)
        allowed = _visible_labels(task, me)
        for label in set(texts.values()) - allowed:
            assert label not in prompt, f"{call.seat} saw a label it may not see: {label!r}"
        for other, lines in errand_lines.items():
            if other != me:
                for line in lines:
                    assert line not in prompt, f"{call.seat} saw agent {other}'s {line!r}"
        heard = {m.text for m in delivered if call.seat in m.recipients}
        for match in TOKEN.finditer(prompt):
            kind, author = match.group(1), int(match.group(3))
            if author == me:
                continue
            assert kind == "msg", f"{call.seat} saw agent {author}'s thinking {match.group(0)}"
            assert match.group(0) in heard, f"{call.seat} saw undelivered {match.group(0)}"
        checked += 1
    return checked


def _meeting_labels_reach_only_participants(task: Scenario, trace: TraceRecorder) -> None:
    texts = task.private_texts()
    for meeting in task.meetings:
        assert meeting.label_id is not None
        label = texts[meeting.label_id]
        for call in model_calls(trace):
            assert call.seat is not None
            attends = agent_of(call.seat) in meeting.participants
            if not attends and label not in _visible_labels(task, agent_of(call.seat)):
                assert label not in prompt_text(call)


CASES = [
    ("tiny", 6, "dm", "{m}"),
    ("tiny", 1, "participant-groupchat", "{m}"),
    ("tiny", 2, "all-agent-groupchat", "{m}"),
    ("tiny", 3, "dm", "{m},imap,{m}"),
    ("tiny", 4, "all-agent-groupchat", "imap,{m},{m}"),
    ("canonical", 5, "dm", "{m}"),
    ("canonical", 6, "all-agent-groupchat", "{m},{m},imap,{m},{m}"),
]


@cache
def _task(suite: str, index: int) -> Scenario:
    """One task of a shipped suite with labels from our bank (hydrating only that task)."""
    tasks = load_suite(suite)
    return hydrate_labels(tasks[index % len(tasks)], load_label_bank(BANK))


@pytest.mark.parametrize(("suite", "seed", "condition", "lineup"), CASES)
def test_no_prompt_leaks(suite: str, seed: int, condition: str, lineup: str) -> None:
    task = _task(suite, seed)
    agents = RandomAgents(seed, task.num_agents, task.num_slots)
    with registered_mock(f"cal-llm-random-{seed}", agents) as model:
        _, trace = run_llm_episode(
            task,
            lineup.format(m=model),
            condition=condition,
            options={"max_turns_per_round": 3},
        )
    assert _check_no_leaks(task, trace) > 5
    _meeting_labels_reach_only_participants(task, trace)
    # The game really exercised routing: messages were delivered.
    assert any(isinstance(e, MessageDelivered) for e in trace.events)
