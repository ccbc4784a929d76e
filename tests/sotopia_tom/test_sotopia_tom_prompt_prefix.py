"""Sotopia-ToM prompts keep their prefix: each seat's acting and coach
calls start with the previous call's prompt up to the end of its history, the state
calls' system message is the card the acting prompt starts with and the updates share
their instructions, nothing that changes every turn comes before
the history, the JSON schema is never written into the text (it goes once, as the
response format), and the turn prompt carries the same information as before."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest

from confide.core.message import Channel, Message
from confide.core.trace import ModelCall
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.actions import InfoObservation, TurnLimits, briefing_for
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.envs.sotopia_tom.participants.context import render_message, turn_prompt
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.llm.providers.json_instance import minimal_instance
from confide.runner.models import RunModels
from confide.testing import run_once

S = load_scenario_by_id("core", "finance-sme-loan")
TAIL = "\n\nIt is round "
EMPTY = "(nothing has been said yet)"


def reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """Speaks publicly every turn (states and notes: the schema's minimal instance)."""
    value: dict[str, Any] = minimal_instance(config.response_schema or {})
    if "action" in value:
        value["action"] = {"action_type": "speak", "to": [], "content": "Noted, thanks."}
    return json.dumps(value)


@pytest.fixture(autouse=True)
def mock() -> Iterator[None]:
    register_mock("pp-agent", lambda **_: MockModel(reply, name="pp-agent"), replace=True)
    yield
    unregister_mock("pp-agent")


def calls(strategy: str) -> dict[tuple[str | None, str], list[ModelCall]]:
    capture = run_once(
        SPEC,
        S,
        f"mock/pp-agent:{strategy}",
        model_factory=RunModels(),
        options={"max_turns": 12},
        roles={"judge": "reference"},
    )
    grouped: dict[tuple[str | None, str], list[ModelCall]] = defaultdict(list)
    for event in capture.trace.events:
        if isinstance(event, ModelCall):
            grouped[(event.seat, event.purpose)].append(event)
    return grouped


@pytest.mark.parametrize(
    "strategy", ["basic", "cot-privacy", "tom-coach", "tom-belief", "self-focused"]
)
def test_each_call_starts_with_the_previous_calls_history(strategy: str) -> None:
    grouped = calls(strategy)
    checked = 0
    for (seat, purpose), seat_calls in grouped.items():
        assert all('"properties"' not in m["content"] for c in seat_calls for m in c.messages)
        assert all(c.config["response_schema"] for c in seat_calls)  # the schema, once
        pairs = list(pairwise(seat_calls))
        if purpose == "act":
            assert len(seat_calls) >= 3
            for before, after in pairs:
                assert [m["role"] for m in after.messages] == ["system", "user"]
                assert after.messages[0] == before.messages[0]  # card and guidance fixed
                history = before.messages[1]["content"].split(TAIL)[0]
                history = history.removesuffix(EMPTY)  # the first speaker's first turn
                assert after.messages[1]["content"].startswith(history)
                assert history.startswith("CONVERSATION SO FAR")
                checked += 1
        elif purpose == "coach":  # stateless: the whole history again, at the end
            for before, after in pairs:
                earlier = before.messages[0]["content"].removesuffix(EMPTY)
                assert after.messages[0]["content"].startswith(earlier)
                checked += 1
        elif purpose in ("belief", "plan"):  # init, then updates from the new messages
            assert all([m["role"] for m in c.messages] == ["system", "user"] for c in seat_calls)
            cards = {c.messages[0]["content"] for c in seat_calls}
            assert len(cards) == 1  # the card, the same at every call
            card = cards.pop()
            acts = grouped[(seat, "act")]  # the acting prompt's system message starts so
            assert acts and all(a.messages[0]["content"].startswith(card + "\n\n") for a in acts)
            asks = [c.messages[1]["content"] for c in seat_calls]
            updates = [u for u in asks if "CURRENT STATE" in u]
            fixed = {u.split("\n\nCURRENT STATE")[0] for u in updates}
            assert len(updates) >= 2 and len(fixed) == 1  # instructions, then the state
            assert fixed.pop().startswith("You maintain")
            inits = [i for i in asks if i not in updates]
            assert len(inits) == 1 and inits[0].startswith("You maintain")
            checked += 1
    assert checked >= 3


def message(index: int, sender: str, to: tuple[str, ...], rnd: int) -> Message:
    channel = Channel.broadcast() if not to else Channel.dm()
    return Message(
        id=index,
        sender=sender,
        channel=channel,
        recipients=to or tuple(S.agent_names),
        text=f"message number {index}",
        round=rnd,
        turn=index % 3 + 1,
    )


@pytest.mark.parametrize("seed", range(6))
def test_turn_prompt_keeps_every_fact_and_moves_only_what_changes(seed: int) -> None:
    rng = random.Random(seed)
    me = S.agent_names[0]
    history = [
        message(i, rng.choice(S.agent_names), rng.choice([(), (me,)]), 1 + i // 3)
        for i in range(rng.randint(1, 12))
    ]
    cut = rng.randint(0, len(history) - 1)
    limits = TurnLimits(max_turns=45, stale_turns=4, leave_ends="all")

    def observation(seen: list[Message], first_new: int, rnd: int) -> InfoObservation:
        return InfoObservation(
            agent=me,
            round=rnd,
            turn=rnd * 3,
            limits=limits,
            briefing=briefing_for(S, me),
            history=seen,
            first_new=first_new,
            present=tuple(S.agent_names),
            feedback="try again" if rnd % 2 else None,
        )

    early = turn_prompt(observation(history[:cut], 0, 1), ["NOTE ONE"])
    late = turn_prompt(observation(history, cut, 2), ["NOTE TWO"])
    # the later prompt starts with the earlier one's history part
    assert cut == 0 or late.startswith(early.split(TAIL)[0])
    lines = late.splitlines()
    rendered = [render_message(m, me) for m in history]
    assert [ln for ln in lines if ln.startswith("[R")] == rendered  # every message, in order
    status = (
        f"It is round 2; this is turn 6 of at most 45. Still in the conversation: "
        f"{', '.join(S.agent_names)}."
    )
    assert status in lines and lines.index(status) > len(rendered)  # after the history
    first = rendered[cut].split("]")[0] + "]"
    assert f"New since your last turn: the messages from {first} on." in lines
    assert "NOTE TWO" in lines and "NOTE: try again" not in lines
    assert lines[-1].startswith("Choose your next action.")
    assert not any("--- new since" in ln for ln in lines)
