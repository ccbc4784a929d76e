"""Incognita prompts keep their prefix: every model seat's and role's
consecutive requests start with the previous request's messages, and the customer's
released fields reach it once each, right after the agent message that asked for them,
with the same wording the <memory> block always used (A.2, section 3.1)."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise

import pytest
from _incognita_env_support import CONDITIONS, MOCK, MOCK_ROLES, run, tasks

from confide.core.trace import ModelCall
from confide.envs.incognita.actions import CustomerObservation
from confide.envs.incognita.participants.customer_llm import customer_turns

GROWING = ("act",)
"""Purposes whose requests grow append-only (the gate classifier and the judge ask one
self-contained question per call: their system prompt is the shared prefix)."""


def by_seat(calls: list[ModelCall]) -> dict[tuple[str | None, str], list[ModelCall]]:
    grouped: dict[tuple[str | None, str], list[ModelCall]] = defaultdict(list)
    for call in calls:
        grouped[(call.seat, call.purpose)].append(call)
    return grouped


@pytest.mark.parametrize("condition", CONDITIONS)
@pytest.mark.parametrize("card", [0, 5, 11])
def test_every_seat_and_role_extends_its_previous_request(condition: str, card: int) -> None:
    episode = run(tasks()[card], condition, MOCK, roles=MOCK_ROLES)
    calls = [e for e in episode.trace.events if isinstance(e, ModelCall)]
    grouped = by_seat(calls)
    assert ("USER", "act") in grouped and ("AGENT", "act") in grouped
    checked = 0
    for (_seat, purpose), seat_calls in grouped.items():
        systems = {c.messages[0]["content"] for c in seat_calls if purpose != "judge"}
        assert len(systems) <= 1 or purpose not in GROWING  # one fixed system prompt
        if purpose not in GROWING:
            continue
        steps = seat_calls  # mock/incognita answers every step usably: no repair turns
        for before, after in pairwise(steps):
            assert after.messages[: len(before.messages)] == before.messages
            checked += 1
    assert checked > 0


def test_released_fields_follow_the_message_that_asked_once_each() -> None:
    card = next(t for t in tasks() if t.id == "sd-05-return-whole-order")
    episode = run(card, "social", "reference", roles={"customer": MOCK}, observe=True)
    calls = [
        e
        for e in episode.trace.events
        if isinstance(e, ModelCall) and e.seat == "USER" and e.purpose == "act"
    ]
    releases = episode.env("gate_release")
    assert len(releases) == 3 and episode.row["gate_releases"] == 3
    values = {f.token: f.value for f in card.card.customer_fields}
    system = calls[0].messages[0]["content"]
    assert card.card.opening_line in system and card.card.requests[0] in system
    assert not any(value in system for value in values.values())  # memory grows later
    for call in calls:
        assert call.messages[0]["content"] == system
    final = calls[-1].messages
    text = "\n".join(m["content"] for m in final)
    blocks = [
        (m, m["content"].split("\n\n<memory>\n", 1)[1])
        for m in final[1:]
        if "<memory>" in m["content"]
    ]
    assert len(blocks) == len(releases)  # one per asking message (one field each here)
    said = {m.id: m.text for m in episode.observations["USER"][-1].history}
    for release, (turn, block) in zip(releases, blocks, strict=True):
        assert values[release.data.field] in block  # in release order, once each
        # at the end of the very agent message that asked for it
        assert turn["role"] == "user"
        assert turn["content"].startswith(f"{said[release.data.message_id]}\n\n<memory>")
    unreleased = set(values) - {r.data.field for r in releases}
    assert all(values[token] not in text for token in unreleased)
    observations = episode.observations["USER"]
    last = observations[-1]
    assert isinstance(last, CustomerObservation)
    # the same facts as the memory the gate holds, in release order
    shown = [line for m in final[1:] for line in m["content"].splitlines() if line.startswith("- ")]
    assert shown == [f"- {i.label.capitalize()}: {i.value}" for i in last.memory]


def test_customer_conversation_is_a_pure_function_of_when_fields_were_released() -> None:
    card = next(t for t in tasks() if t.id == "sd-05-return-whole-order")
    episode = run(card, "social", "reference", roles={"customer": MOCK}, observe=True)
    last = episode.observations["USER"][-1]
    assert isinstance(last, CustomerObservation)
    agent_messages = [m.id for m in last.history if m.sender != "USER"]
    none = customer_turns(last, {})
    anchored = customer_turns(last, {agent_messages[0]: last.memory[:1]})
    assert [m.role for m in none] == [m.role for m in anchored]
    changed = [i for i, (a, b) in enumerate(zip(none, anchored, strict=True)) if a != b]
    assert len(changed) == 1
    assert anchored[changed[0]].content.startswith(none[changed[0]].content + "\n\n<memory>")
