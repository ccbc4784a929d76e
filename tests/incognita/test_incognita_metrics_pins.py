"""Incognita's measures pinned by behaviour (bench/mutation.py): counts recomputed from a
trace read back from disk (names equal to, not identical with, the code's constants) tell
the agent's actions from everyone else's, usage is read from every model call whatever
precedes it, an episode that errored is never averaged, a world that is not the gold one
never passes, and no output assertion goes unjudged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from _incognita_env_support import task

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered, ModelCall, TraceEvent
from confide.envs.incognita import events as ev
from confide.envs.incognita.judge import LiteralJudge, Verdict
from confide.envs.incognita.metrics import (
    episode_measures,
    evaluate,
    result_row,
    summarize,
    usage_by_role,
)
from confide.envs.incognita.scenario import replay_gold


def _read(text: str) -> str:
    """An equal string that is not the same object, as a name read from a trace file is."""
    copy = "".join(list(text))
    assert copy == text and copy is not text
    return copy


AGENT, USER = _read("AGENT"), _read("USER")


def _msg(sender: str, to: str) -> MessageDelivered:
    message = Message(id=0, sender=sender, recipients=(to,), channel=Channel.dm(), text="x")
    return MessageDelivered(message=message)


def _proposed(proposer: str) -> ev.ToolProposed:
    return ev.ToolProposed(data=ev.ToolCallData.model_construct(proposer=proposer))


def _invalid(seat: str) -> ev.InvalidAction:
    return ev.InvalidAction(seat=seat, data=ev.InvalidActionData(participant=seat, problem=""))


def test_measures_from_a_read_back_trace_count_only_the_agents_turns() -> None:
    events: list[TraceEvent] = [
        _msg(AGENT, USER), _msg(AGENT, USER), _msg(AGENT, "Auden"), _msg(USER, AGENT),
        _proposed(AGENT), _proposed(AGENT), _proposed("Auden"),
        _invalid(AGENT), _invalid(AGENT), _invalid("Auden"),
    ]  # fmt: skip
    assert episode_measures(events) == {
        "turns": 7, "messages_to_customer": 2, "messages_to_desks": 1, "agent_tool_calls": 2,
        "executed_calls": 0, "executed_writes": 0, "rejected_calls": 0, "gate_releases": 0,
        "invalid_turns": 2, "ended": "budget",
    }  # fmt: skip


def _call(seat: str, purpose: str, usage: dict[str, Any] | None) -> ModelCall:
    completion = {"text": ""} if usage is None else {"text": "", "usage": usage}
    return ModelCall(seat=seat, purpose=purpose, model="m", messages=[], completion=completion)


def test_usage_of_a_read_back_trace_is_split_by_role_whatever_comes_first() -> None:
    events: list[TraceEvent] = [
        _msg(AGENT, USER),
        _call(AGENT, "act", {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.5}),
        _call(USER, "act", {"completion_tokens": 3, "cost_usd": 0.0}),
        _call(USER, _read("gate"), {"prompt_tokens": 4, "cost_usd": 0.25}),
        _call(_read("judge"), "judge", None),
    ]
    usage = usage_by_role(events)
    assert usage["agent"] == {"calls": 1, "prompt_tokens": 10, "completion_tokens": 2,
                              "cost_usd": 0.5, "unknown_cost_calls": 0}  # fmt: skip
    assert usage["customer"] == {"calls": 1, "prompt_tokens": 0, "completion_tokens": 3,
                                 "cost_usd": 0.0, "unknown_cost_calls": 0}  # fmt: skip
    assert usage["gate"] == {"calls": 1, "prompt_tokens": 4, "completion_tokens": 0,
                             "cost_usd": 0.25, "unknown_cost_calls": 0}  # fmt: skip
    assert usage["judge"] == {"calls": 1, "prompt_tokens": 0, "completion_tokens": 0,
                              "cost_usd": 0.0, "unknown_cost_calls": 1}  # fmt: skip
    assert usage["desk"]["calls"] == 0


EVALUATION = ev.Evaluation(success=True, db_pass=True, final_hash="h", gold_hash="h",
                           outputs_pass=None, judge=None, assertions=[])  # fmt: skip


def test_a_row_counts_prompt_and_completion_tokens_and_costs_to_the_micro_dollar() -> None:
    events = [_call(AGENT, "act", {"prompt_tokens": 10, "completion_tokens": 2,
                                   "cost_usd": 0.1234564})]  # fmt: skip
    row = result_row("m", EVALUATION, events)
    assert (row["agent_tokens"], row["tokens"]) == (12, 12)
    assert row["agent_cost_usd"] == 0.123456 and row["cost_usd"] == 0.123456


def test_an_episode_that_errored_is_never_averaged_whatever_columns_it_carries() -> None:
    def row(status: str, success: int) -> dict[str, Any]:
        return {"participant": "a", "condition": "social", "success": success, "db_pass": 1,
                "turns": 2, "cost_usd": 0.5, "status": status}  # fmt: skip

    (summary,) = summarize([row(_read("ok"), 1), row("error", 0), row("ok", 0)])
    assert (summary["episodes"], summary["success"]) == (2, 0.5)


def test_a_world_whose_hash_is_not_the_gold_one_never_passes() -> None:
    card = task("sd-01-cancel-blanket")
    gold = replay_gold(card.world, card.card).state_hash()
    for final in ("", "0" * len(gold), gold + "0", "f" * len(gold)):
        result = asyncio.run(evaluate(card.world, card.card, final, [], LiteralJudge()))
        assert not result.db_pass and not result.success


class _SilentJudge(LiteralJudge):
    """A judge that returns no verdict at all."""

    async def judge(self, assertions: Sequence[str], messages: Sequence[Message]) -> list[Verdict]:
        return []


def test_an_output_assertion_never_goes_unjudged() -> None:
    card = task("sd-05-return-whole-order")
    assert card.card.output_assertions
    gold = replay_gold(card.world, card.card).state_hash()
    with pytest.raises(ValueError):
        asyncio.run(evaluate(card.world, card.card, gold, [], _SilentJudge()))
