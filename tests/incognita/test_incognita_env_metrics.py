"""Evaluator (hash + judged assertions), judges, per-role usage, measures, options."""

import asyncio
from typing import Any

import pytest
from _incognita_env_support import run, task

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.message import Channel, Message
from confide.core.options import OptionsError
from confide.core.trace import (
    MessageDelivered,
    ModelCall,
    TraceEvent,
    TraceRecorder,
)
from confide.envs.incognita import events as ev
from confide.envs.incognita.env import run_episode
from confide.envs.incognita.judge import LiteralJudge, ModelJudge, literals
from confide.envs.incognita.metrics import (
    episode_measures,
    evaluate,
    result_row,
    summarize,
    usage_by_role,
)
from confide.envs.incognita.participants import ParticipantError
from confide.envs.incognita.scenario import replay_gold
from confide.errors import ConfideError
from confide.llm import GenerateConfig, MockModel


def _msg(i: int, sender: str, to: str, text: str) -> Message:
    return Message(id=i, sender=sender, recipients=(to,), channel=Channel.dm(), text=text)


DIALOGUE = [
    _msg(0, "USER", "AGENT", "How much do I get back? 553.41 would be nice."),
    _msg(1, "AGENT", "USER", "Your refund is 553.41 dollars; 16 items were checked."),
    _msg(2, "AGENT", "Auden", "The tracking number is 279268846216."),
]


def _judge(judge: Any, assertions: list[str]) -> list[bool]:
    return [v.holds for v in asyncio.run(judge.judge(assertions, DIALOGUE))]


def test_literal_judge_needs_every_literal_in_the_agents_words_to_the_customer() -> None:
    assert literals("The agent tells the customer that 6 versions are in stock.") == ["6"]
    assert literals("The agent gives the customer the tracking number 279268846216.") == [
        "279268846216"]
    verdicts = _judge(LiteralJudge(), [
        "The agent tells the customer that the refund comes to 553.41 dollars in total.",
        "The agent tells the customer that the refund comes to 553.4 dollars.",
        "The agent tells the customer that 6 items were checked.",
        "The agent gives the customer the tracking number 279268846216.",  # said to a desk
        "The agent is polite.",  # nothing literal to check
    ])
    assert verdicts == [True, False, False, False, False]


@pytest.mark.parametrize("reply", ["", "no verdict here", '{"verdicts": []}',
                                   '{"verdicts": [{"assertion": 2, "holds": true}]}'])
def test_model_judge_treats_empty_unparsable_or_missing_verdicts_as_failures(reply: str) -> None:
    judge = ModelJudge(MockModel([reply], cycle=True), GenerateConfig())
    assert _judge(judge, ["The agent tells the customer that 553.41 is refunded."]) == [False]


def test_model_judge_passes_what_it_certifies() -> None:
    reply = '{"verdicts": [{"assertion": 1, "holds": true, "reason": "said so"}]}'
    judge = ModelJudge(MockModel([reply]), GenerateConfig())
    assert _judge(judge, ["The agent tells the customer that 553.41 is refunded."]) == [True]


def test_evaluate_compares_final_and_gold_hashes_and_requires_every_channel() -> None:
    card = task("sd-05-return-whole-order")
    gold = replay_gold(card.world, card.card).state_hash()
    told = [_msg(0, "AGENT", "USER", "The refund comes to 553.41 dollars in total.")]
    silent: list[Message] = []
    both = asyncio.run(evaluate(card.world, card.card, gold, told, LiteralJudge()))
    assert both.success and both.db_pass and both.outputs_pass is True
    assert both.final_hash == both.gold_hash
    db_only = asyncio.run(evaluate(card.world, card.card, gold, silent, LiteralJudge()))
    assert db_only.db_pass and db_only.outputs_pass is False and not db_only.success
    untouched = asyncio.run(evaluate(card.world, card.card, card.world.state_hash(), told,
                                     LiteralJudge()))
    assert not untouched.db_pass and untouched.outputs_pass and not untouched.success
    no_assertions = task("sd-01-cancel-blanket")
    result = asyncio.run(evaluate(no_assertions.world, no_assertions.card,
                                  replay_gold(no_assertions.world, no_assertions.card)
                                  .state_hash(), silent, LiteralJudge()))
    assert result.success and result.outputs_pass is None and result.judge is None


def _call(seat: str, purpose: str, prompt: int, completion: int, cost: float | None) -> ModelCall:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": cost}
    return ModelCall(seat=seat, purpose=purpose, model="m", messages=[],
                     completion={"text": "", "usage": usage})


def test_usage_is_split_by_role() -> None:
    events = [_call("AGENT", "act", 10, 2, 0.5), _call("AGENT", "act", 1, 1, 0.25),
              _call("USER", "act", 5, 5, 0.1), _call("USER", "gate", 3, 1, None),
              _call("Auden", "act", 7, 0, 1.0), _call("Faye", "act", 1, 0, 1.0),
              _call("judge", "judge", 2, 2, 0.0)]
    usage = usage_by_role(events)
    assert usage["agent"] == {"calls": 2, "prompt_tokens": 11, "completion_tokens": 3,
                              "cost_usd": 0.75, "unknown_cost_calls": 0}
    assert usage["gate"]["unknown_cost_calls"] == 1 and usage["gate"]["cost_usd"] == 0.0
    assert usage["desk"]["calls"] == 2 and usage["desk"]["cost_usd"] == 2.0
    assert usage["customer"]["prompt_tokens"] == 5 and usage["judge"]["calls"] == 1


def test_episode_measures_count_agent_turns_by_kind() -> None:
    events: list[TraceEvent] = [
        MessageDelivered(message=_msg(0, "USER", "AGENT", "hi")),
        MessageDelivered(message=_msg(1, "AGENT", "USER", "email?")),
        # only the fields the counts use (model_construct: the rest is not needed here)
        ev.GateRelease(data=ev.GateReleaseData.model_construct(field="email")),
        MessageDelivered(message=_msg(2, "AGENT", "Auden", "look up")),
        ev.ToolProposed(data=ev.ToolCallData.model_construct(proposer="Auden")),
        ev.ToolExecuted(data=ev.ToolExecutedData.model_construct(proposer="Auden", kind="write")),
        ev.ToolProposed(data=ev.ToolCallData.model_construct(proposer="AGENT")),
        ev.ToolRejected(data=ev.ToolRejectedData.model_construct(proposer="AGENT")),
        ev.InvalidAction(seat="AGENT", data=ev.InvalidActionData(participant="AGENT", problem="")),
        ev.InvalidAction(seat="Auden", data=ev.InvalidActionData(participant="Auden", problem="")),
        ev.Final(seat="AGENT", data=ev.FinalData(turn=3, text="done")),
    ]
    assert episode_measures(events) == {
        "turns": 5, "messages_to_customer": 1, "messages_to_desks": 1, "agent_tool_calls": 1,
        "executed_calls": 1, "executed_writes": 1, "rejected_calls": 1, "gate_releases": 1,
        "invalid_turns": 1, "ended": "final"}


def test_summarize_groups_by_participant_and_condition() -> None:
    rows: list[dict[str, Any]] = [
        {"participant": "a", "condition": "social", "success": 1, "db_pass": 1, "turns": 10,
         "cost_usd": 0.5, "status": "ok"},
        {"participant": "a", "condition": "social", "success": 0, "db_pass": 1, "turns": 20,
         "cost_usd": 1.5, "status": "ok"},
        {"participant": "a", "condition": "social", "status": "error"},
        {"participant": "a", "condition": "direct", "success": 1, "db_pass": 1, "turns": 4,
         "cost_usd": 0.0, "status": "ok"},
    ]
    assert summarize(rows) == [
        {"participant": "a", "condition": "direct", "episodes": 1, "success": 1.0,
         "db_pass": 1.0, "turns": 4.0, "cost_usd": 0.0},
        {"participant": "a", "condition": "social", "episodes": 2, "success": 0.5,
         "db_pass": 1.0, "turns": 15.0, "cost_usd": 1.0},
    ]


EVALUATION = ev.Evaluation(success=True, db_pass=True, final_hash="h", gold_hash="h",
                           outputs_pass=None, judge=None, assertions=[])


def test_unpriced_costs_are_never_summed_as_zero() -> None:
    def rows(*costs: object) -> list[dict[str, Any]]:
        return [{"participant": "a", "condition": "social", "success": 1, "db_pass": 1,
                 "turns": 1, "cost_usd": c, "status": "ok"} for c in costs]

    assert summarize(rows("0.5", "unpriced"))[0]["cost_usd"] == "partial"
    assert summarize(rows("unpriced", "unpriced"))[0]["cost_usd"] == "unpriced"
    assert summarize(rows("partial", "partial"))[0]["cost_usd"] == "partial"
    assert summarize(rows("0.5", "1.5"))[0]["cost_usd"] == 1.0
    events = [_call("AGENT", "act", 10, 2, 0.5), _call("USER", "gate", 3, 1, None),
              _call("USER", "act", 3, 1, None)]
    row = result_row("m", EVALUATION, events)
    assert row["agent_cost_usd"] == 0.5 and row["gate_cost_usd"] == "unpriced"
    assert row["cost_usd"] == "partial" and row["unknown_cost_calls"] == 2
    assert result_row("m", EVALUATION, events[:1])["cost_usd"] == 0.5


def test_episode_row_and_evaluation_event() -> None:
    episode = run(task("sd-18-cancel-exchange-and-ask"), "social")
    evaluation = episode.env("evaluation")[0].fields()
    assert evaluation["success"] and evaluation["judge"] == "literal"
    assert evaluation["assertions"][0]["holds"] is True
    row = episode.row
    assert row["seat"] == "agent" and row["participant"] == "reference"
    assert row["executed_writes"] == 2 and row["gate_releases"] == 5
    assert row["cost_usd"] == 0.0 and row["tokens"] == 0
    assert episode.result.final_state["final_hash"] == evaluation["final_hash"]


def _ctx(**changes: Any) -> EpisodeContext:
    base: dict[str, Any] = dict(episode_id="x", task=task("sd-01-cancel-blanket"),
                                lineup=parse_lineup("reference"), seed=0,
                                trace=TraceRecorder(), model_factory=None, condition="direct")
    base.update(changes)
    return EpisodeContext(**base)


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"options": {"max_turn": 3}}, OptionsError, "max_turn"),
        ({"options": {"max_turns": 0}}, OptionsError, "max_turns"),
        ({"roles": {"desks": "scripted"}}, ParticipantError, "'desks'"),
        ({"roles": {"desk": "wizard"}}, ParticipantError, "desk='wizard'"),
        ({"lineup": parse_lineup("oracle")}, ParticipantError, "'oracle'"),
        ({"condition": "hybrid"}, ConfideError, "'hybrid'"),
    ],
)
def test_bad_configuration_is_reported_by_name(
    changes: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        asyncio.run(run_episode(_ctx(**changes)))
