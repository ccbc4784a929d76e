"""The model judge's reply schema is exact for the card: n verdicts, numbered 1..n."""

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from confide.core.message import Channel, Message
from confide.envs.incognita.judge import ModelJudge, Verdict, reply_model
from confide.llm import ChatMessage, ChatModel, Completion, GenerateConfig, MockModel, get_model
from confide.llm.providers.json_instance import minimal_instance

ASSERTIONS = [
    "The agent tells the customer that 553.41 is refunded.",
    "The agent tells the customer that 16 items were checked.",
    "The agent tells the customer the order number #W1234567.",
]
DIALOGUE = [
    Message(
        id=0,
        sender="AGENT",
        recipients=("USER",),
        channel=Channel.dm(),
        text="Your refund is 553.41 dollars; 16 items were checked.",
    ),
]


def _verdicts(*numbers: int) -> str:
    return json.dumps(
        {"verdicts": [{"assertion": i, "holds": True, "reason": "said"} for i in numbers]}
    )


def _resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    return schema["$defs"][ref.rsplit("/", 1)[-1]] if ref else node


def test_the_schema_bounds_the_array_and_numbers_each_item() -> None:
    schema = reply_model(3).model_json_schema()
    array = schema["properties"]["verdicts"]
    assert array["minItems"] == array["maxItems"] == 3
    items = [_resolved(schema, item) for item in array["prefixItems"]]
    assert [item["properties"]["assertion"] for item in items] == [
        {"type": "integer", "enum": [i], "title": "Assertion"} for i in (1, 2, 3)
    ]
    assert "const" not in json.dumps(schema)  # not every provider's dialect has it
    assert schema["title"] == "JudgeReply"  # what mock/incognita answers by


def test_the_schema_is_one_object_per_count() -> None:
    assert reply_model(3) is reply_model(3)
    assert reply_model(2).model_json_schema() != reply_model(3).model_json_schema()


@pytest.mark.parametrize(
    ("reply", "field", "message"),
    [
        (_verdicts(1, 2, 3, 4), "`verdicts`", "at most 3 items"),
        (_verdicts(1, 2), "`verdicts.2`", "Field required"),  # the third is missing
        (_verdicts(1, 3, 2), "`verdicts.1.assertion`", "Input should be 2"),
    ],
)
def test_a_wrong_count_or_numbering_is_refused_naming_the_field(
    reply: str, field: str, message: str
) -> None:
    sent: list[GenerateConfig] = []
    repairs: list[str] = []

    def answer(messages: list[ChatMessage], config: GenerateConfig) -> str:
        sent.append(config)
        if len(sent) == 1:
            return reply
        repairs.append(messages[-1].content)
        return _verdicts(1, 2, 3)

    judge = ModelJudge(MockModel(answer), GenerateConfig())
    verdicts = asyncio.run(judge.judge(ASSERTIONS, DIALOGUE))
    assert len(repairs) == 1
    assert f"field {field}" in repairs[0] and message in repairs[0]
    assert verdicts == [Verdict(assertion=i, holds=True, reason="said") for i in (1, 2, 3)]
    assert sent[0].response_schema == sent[1].response_schema  # the same, repairs included


def test_an_overlong_reply_after_every_repair_fails_every_assertion() -> None:
    judge = ModelJudge(MockModel([_verdicts(1, 2, 3, 4)], cycle=True), GenerateConfig())
    verdicts = asyncio.run(judge.judge(ASSERTIONS, DIALOGUE))
    assert [v.holds for v in verdicts] == [False, False, False]
    assert all("field `verdicts`" in v.reason and "at most 3 items" in v.reason for v in verdicts)


def test_mock_json_answers_a_valid_reply_in_one_call() -> None:
    instance = minimal_instance(reply_model(3).model_json_schema())
    assert [v["assertion"] for v in instance["verdicts"]] == [1, 2, 3]
    judge = ModelJudge(get_model("mock/json"), GenerateConfig(), max_attempts=1)
    verdicts = asyncio.run(judge.judge(ASSERTIONS, DIALOGUE))
    assert verdicts == [Verdict(assertion=i, holds=False) for i in (1, 2, 3)]


def test_the_local_grammar_admits_exactly_n_numbered_items() -> None:
    pytest.importorskip("llama_cpp")
    from confide.llm.providers.llama_engine import json_gbnf, json_grammar

    schema = reply_model(2).model_json_schema()
    assert json_grammar(schema) is not None
    rules = dict(line.split(" ::= ", 1) for line in json_gbnf(schema).splitlines())
    assert rules["verdicts"] == '"[" space verdicts-tuple-0 "," space verdicts-tuple-1 "]" space'
    assert (rules["Verdict1-assertion"], rules["Verdict2-assertion"]) == ('"1"', '"2"')


class _Counting:
    """A model that keeps the completions of the model it wraps."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner, self.name = inner, inner.name
        self.completions: list[Completion] = []

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        completion = await self.inner.generate(messages, config=config)
        self.completions.append(completion)
        return completion


@pytest.mark.local_model
def test_the_local_model_answers_every_assertion_in_one_complete_call() -> None:
    """Without the bound the 135M model numbered past the last assertion up to the token
    cap, three times (every call cut off, every assertion failed as unusable)."""
    from confide.envs.incognita.participants import SIMULATOR_CONFIG

    model = _Counting(get_model("local/smollm2"))
    verdicts = asyncio.run(ModelJudge(model, SIMULATOR_CONFIG).judge(ASSERTIONS, DIALOGUE))
    assert [c.finish_reason for c in model.completions] == ["stop"]
    assert [v.assertion for v in verdicts] == [1, 2, 3]
    assert not any(v.reason.startswith("judge reply unusable") for v in verdicts)
