"""Judges of a card's output assertions (the Incognita paper, section 3.3).

A card's ``output_assertions`` are statements about what the agent told the customer. A
judge reads the dialogue between the agent and the customer -- nothing else -- and gives
one verdict per assertion.

- `ModelJudge` (the ``judge`` role bound to a model): one JSON reply with a verdict for
  every assertion. Its reply schema (`reply_model`) is exact for the card: the verdicts
  are an array of exactly n items, the i-th for assertion i (a one-value ``enum``, which
  every provider's schema dialect accepts where ``const`` is not universal), so a
  constrained decoder (the local model's grammar) cannot number past the last assertion
  and the parser refuses a reply with too few, too many or misnumbered verdicts, naming
  the field, for the repair loop. The schema depends on n alone, so every call of a task,
  repairs included, sends the same one (prompt caching is unaffected). An empty,
  unparsable or incomplete reply, after the repair loop, fails every assertion: a judge
  that said nothing certified nothing.
- `LiteralJudge` (the offline default, LLM-free): an assertion holds when every literal
  it states -- each number (``553.41``, ``6``) and each identifier containing a digit
  (``#W1234567``) -- occurs as a whole token in the agent's messages to the customer. An
  assertion with no such literal cannot be checked this way and fails. All shipped cards'
  assertions state a number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, WithJsonSchema, create_model

from confide.core.message import Message
from confide.envs.incognita import prompts
from confide.envs.incognita.conditions import AGENT, CUSTOMER
from confide.envs.incognita.prompting import ask_json
from confide.llm import ChatMessage, ChatModel, GenerateConfig

_LITERAL = re.compile(r"#?[A-Za-z_]*\d[\w.]*")


class Verdict(BaseModel):
    """The judgement on one assertion (1-based `assertion` number)."""

    model_config = ConfigDict(extra="forbid")

    assertion: int
    holds: bool
    reason: str = ""


class JudgeReply(BaseModel):
    """What a model judge must answer (`reply_model` makes it exact for n assertions)."""

    model_config = ConfigDict(extra="forbid")

    verdicts: Sequence[Verdict]


@cache
def reply_model(n: int) -> type[JudgeReply]:
    """`JudgeReply` for a card with `n` assertions: `verdicts` holds exactly n items
    (``prefixItems``, ``minItems`` = ``maxItems`` = n), item i carrying ``assertion`` i.
    One class per n, so its schema is the same for every call."""
    positions = tuple(
        create_model(f"Verdict{i}", __base__=Verdict, assertion=(_number(i), ...))
        for i in range(1, n + 1)
    )
    verdicts: Any = tuple.__class_getitem__(positions)  # tuple[Verdict1, ..., Verdictn]
    return create_model("JudgeReply", __base__=JudgeReply, verdicts=(verdicts, ...))


def _number(i: int) -> Any:
    """Assertion number `i` alone, in the schema as a one-value ``enum``."""
    return Annotated[Literal[i], WithJsonSchema({"type": "integer", "enum": [i]})]


def dialogue(messages: Sequence[Message]) -> list[Message]:
    """The messages exchanged between the agent and the customer, in order."""
    pair = {AGENT, CUSTOMER}
    return [m for m in messages if m.sender in pair and set(m.recipients) <= pair]


def render_dialogue(messages: Sequence[Message]) -> str:
    return "\n".join(f"{m.sender}: {m.text or ''}" for m in dialogue(messages))


def literals(assertion: str) -> list[str]:
    """The numbers and digit-bearing identifiers an assertion states."""
    return [token.rstrip(".") for token in _LITERAL.findall(assertion)]


def stated(literal: str, text: str) -> bool:
    return re.search(rf"(?<![\w.#]){re.escape(literal)}(?![\w]|\.\d)", text) is not None


class LiteralJudge:
    """The LLM-free judge (see the module docstring)."""

    name = "literal"

    async def judge(self, assertions: Sequence[str], messages: Sequence[Message]) -> list[Verdict]:
        told = "\n".join(m.text or "" for m in dialogue(messages) if m.sender == AGENT)
        verdicts = []
        for number, assertion in enumerate(assertions, start=1):
            found = literals(assertion)
            missing = [lit for lit in found if not stated(lit, told)]
            if not found:
                verdicts.append(Verdict(assertion=number, holds=False,
                                        reason="no literal value to check"))
            else:
                verdicts.append(Verdict(assertion=number, holds=not missing,
                                        reason=f"not stated: {missing}" if missing else "stated"))
        return verdicts


class ModelJudge:
    """A chat-model judge (see the module docstring)."""

    def __init__(self, model: ChatModel, config: GenerateConfig, max_attempts: int = 3) -> None:
        self.name = model.name
        self._model = model
        self._config = config
        self._max_attempts = max_attempts

    async def judge(self, assertions: Sequence[str], messages: Sequence[Message]) -> list[Verdict]:
        listed = "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, start=1))
        prompt = [
            ChatMessage(role="system", content=prompts.render("judge", assertions=listed)),
            ChatMessage(role="user", content=render_dialogue(messages) or "(no messages)"),
        ]
        result = await ask_json(
            self._model, prompt, reply_model(len(assertions)), self._config, self._max_attempts
        )
        if not result.ok or result.value is None:
            reason = f"judge reply unusable: {result.error}"
            return [Verdict(assertion=i, holds=False, reason=reason)
                    for i in range(1, len(assertions) + 1)]
        # the schema fixed one verdict per assertion, in order
        return [Verdict(assertion=v.assertion, holds=v.holds, reason=v.reason)
                for v in result.value.verdicts]
