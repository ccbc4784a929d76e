"""Structured output: parse a reply into a pydantic model, with a bounded repair loop.

`generate_structured` asks for JSON (passing the model's JSON schema as
`config.response_schema` unless the caller set one, so providers that can constrain
decoding do), parses the reply and validates it. When that fails it appends the bad
reply and a user message saying exactly what was wrong -- the JSON syntax error with
line, column and the text around it, or each pydantic field error with its location and
the offending value -- and asks again, up to `max_attempts` calls in total. Bad output
never raises: the caller gets a `StructuredResult` with `ok=False`, every attempt and
the last problem, to record as a typed failure. Provider failures (`ModelError`, after
the retry wrapper gave up) do propagate: an unreachable API is an infrastructure
failure, not a wrong answer by the agent, and must not be scored as one.

A reply that cannot be data is invalid output like any other, never an exception: JSON
nested deeper than `confide.untrusted.MAX_DEPTH`, a string holding a lone surrogate
escape, U+FFFD in the text (what a lone surrogate in a server's reply becomes, see
`Completion`), an integer of more than `MAX_INT_DIGITS` digits (which `int` refuses with
a ValueError) or a reply cut for its size (`llm.recorder.bounded`) each
come back as a problem for the repair turn. `loads_reply` is the one JSON reader of
model output: the tool-call parsers and the environments' own readers use it too.

When the request offers tools (`config.tools`), a reply may instead be a tool call: it
is accepted as `StructuredResult.tool_call` when it is exactly one call, with no text
alongside and arguments that are a JSON object; otherwise that is the problem the repair
turn names (the bad calls go back into the conversation answered as not run).

Extraction is lenient in the way careful harnesses are: a ```json fence is unwrapped,
and prose around a single top-level object is dropped (first `{` to last `}`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.recorder import MAX_REPLY_CHARS, attempt_scope
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig, ToolCall
from confide.untrusted import MAX_DEPTH, REPLACEMENT, InputError, check_plain

T = TypeVar("T", bound=BaseModel)

MAX_INT_DIGITS = 4300
"""The most digits an integer in a reply may have: CPython's default limit on converting
text to int, held here whatever limit the process set (`sys.set_int_max_str_digits`)."""
_LONG_INT = re.compile(rf"-?\d{{{MAX_INT_DIGITS + 1},}}")

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_MAX_SHOWN = 80


InvalidCause = Literal["truncated", "format"]


class StructuredAttempt(BaseModel):
    """One call of the repair loop: the completion and what was wrong with it (None if
    it parsed). `cause` sorts a bad reply: "truncated" when the provider cut it off at
    the token limit (`finish_reason` "length": a budget problem, not the model's
    format), "format" otherwise."""

    attempt: int
    completion: Completion
    problem: str | None = None

    @property
    def cause(self) -> InvalidCause | None:
        if self.problem is None:
            return None
        return "truncated" if self.completion.finish_reason == "length" else "format"


class StructuredResult(BaseModel, Generic[T]):
    """The outcome of `generate_structured`: the parsed value, the one tool call (when the
    request offered tools and the model called one), or a typed failure."""

    ok: bool
    value: T | None = None
    tool_call: ToolCall | None = None
    attempts: list[StructuredAttempt]
    error: str | None = None


class _LongInteger(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _bounded_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise _LongInteger(digits)
    try:
        return int(text)
    except ValueError:  # the process set a lower limit than CPython's default
        raise _LongInteger(digits) from None


def loads_reply(text: str) -> Any:
    """`json.loads` for text a model wrote: an integer longer than `MAX_INT_DIGITS` digits
    is a `json.JSONDecodeError` naming its length and where it starts (plain `json.loads`
    raises a bare ValueError, which would end the episode as an error). Deep nesting still
    raises RecursionError, for the caller to name."""
    try:
        return json.loads(text, parse_int=_bounded_int)
    except _LongInteger as exc:
        found = _LONG_INT.search(text)
        raise json.JSONDecodeError(
            f"an integer of {exc.digits} digits (the most is {MAX_INT_DIGITS})",
            text,
            found.start() if found is not None else 0,
        ) from None


def cut_problem(completion: Completion) -> str | None:
    """What is wrong with a reply cut for its size (`Completion.cut`), or None."""
    if completion.cut is None:
        return None
    return (
        f"your reply was {completion.cut.chars} characters long, over the limit of "
        f"{MAX_REPLY_CHARS}"
    )


def call_arguments(call: ToolCall) -> dict[str, Any] | str:
    """A call's arguments as a JSON object, or a sentence saying what was wrong."""
    try:
        data = loads_reply(call.arguments or "{}")
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        return (
            f"the arguments of your {call.name} call are not valid JSON ({why}): "
            f"{call.arguments[:60]!r}"
        )
    if not isinstance(data, dict):
        return f"the arguments of your {call.name} call must be a JSON object"
    try:
        check_plain(data, f"the arguments of your {call.name} call")
    except InputError as exc:
        return str(exc)
    return data


def tool_call_problem(completion: Completion) -> str | None:
    """What breaks the rule of a tool-calling turn (the Incognita paper §A.1: exactly one tool
    call with no text alongside it), or None."""
    calls = completion.tool_calls
    if len(calls) > 1:
        names = ", ".join(c.name for c in calls)
        return f"you made {len(calls)} tool calls ({names}); make exactly one per turn"
    if completion.text.strip():
        return "a tool call comes with no text alongside it; send the call alone"
    problem = call_arguments(calls[0])
    return problem if isinstance(problem, str) else None


def extract_json_text(text: str) -> str:
    """The part of a reply that should be JSON (fence unwrapped, surrounding prose cut)."""
    stripped = text.strip()
    fenced = _FENCE.search(stripped)
    if fenced:
        return fenced.group(1).strip()
    if stripped[:1] not in ("{", "["):
        start, end = stripped.find("{"), stripped.rfind("}")
        if 0 <= start < end:
            return stripped[start : end + 1]
    return stripped


def _shorten(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= _MAX_SHOWN else shown[: _MAX_SHOWN - 3] + "..."


def _json_problem(text: str, exc: json.JSONDecodeError) -> str:
    near = text[max(0, exc.pos - 20) : exc.pos + 20]
    return (
        f"your reply is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno} "
        f"(character {exc.pos}), near {near!r}"
    )


def _validation_problem(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in err["loc"])
        where = f"field `{loc}`" if loc else "the top-level value"
        lines.append(f"- {where}: {err['msg']} (got {_shorten(err.get('input'))})")
    return "your JSON does not match the required schema:\n" + "\n".join(lines)


def parse_reply(completion: Completion, schema: type[T]) -> T | str:
    """Parse a reply into `schema`: the value, or a sentence saying what was wrong."""
    cut = cut_problem(completion)
    if cut is not None:
        return cut
    broken = completion.text.find(REPLACEMENT)
    if broken >= 0:
        return (
            f"your reply holds U+FFFD at character {broken}, where a character could not be "
            "decoded"
        )
    text = extract_json_text(completion.text)
    if not text:
        return "your reply was empty"
    try:
        data = loads_reply(text)
    except json.JSONDecodeError as exc:
        problem = _json_problem(text, exc)
        if completion.finish_reason == "length":
            problem = "your reply was cut off by the token limit before the JSON ended; " + problem
        return problem
    except RecursionError:
        return f"your reply nests JSON more than {MAX_DEPTH} levels deep"
    try:
        check_plain(data, "your reply")
    except InputError as exc:
        return str(exc)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        return _validation_problem(exc)


def repair_message(problem: str, *, tools: bool = False) -> ChatMessage:
    """The user turn that tells the model what was wrong and what to send instead."""
    either = "exactly one tool call with no text, or " if tools else ""
    return ChatMessage(
        role="user",
        content=(
            f"I could not use that reply: {problem}.\n"
            f"Answer again with {either}only one JSON object that matches the required "
            "schema, with no text before or after it."
        ),
    )


def bad_reply(completion: Completion, problem: str) -> list[ChatMessage]:
    """The bad reply as it goes back into the conversation: the assistant turn (with its
    tool calls, each answered as not run, as function calling requires)."""
    calls = tuple(completion.tool_calls)
    return [
        ChatMessage(role="assistant", content=completion.text, tool_calls=calls),
        *(ChatMessage(role="tool", tool_call_id=c.id, content="Not run: see below.")
          for c in calls),
    ]


async def generate_in_context(
    model: ChatModel, messages: Sequence[ChatMessage], *, config: GenerateConfig
) -> Completion | str:
    """`model.generate`, or, when the conversation no longer fits the model's context or
    the reply was cut for its size, a sentence saying so: the model's limit or its
    runaway reply is invalid output for the seat to record (as for any other unusable
    reply), not an error that aborts the episode."""
    completion = await _generate(model, messages, config=config)
    if isinstance(completion, str):
        return completion
    return cut_problem(completion) or completion


async def _generate(
    model: ChatModel, messages: Sequence[ChatMessage], *, config: GenerateConfig
) -> Completion | str:
    try:
        return await model.generate(messages, config=config)
    except ModelError as exc:
        if exc.kind != "context_length":
            raise
        return f"the conversation no longer fits the model's context ({exc.message})"


async def generate_structured(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    schema: type[T],
    *,
    config: GenerateConfig = GenerateConfig(),  # noqa: B008 - frozen, immutable
    max_attempts: int = 3,
) -> StructuredResult[T]:
    """Ask `model` for a JSON reply valid against `schema`, repairing bad replies. A
    conversation the model's context cannot hold is the model's limit, not the
    harness's: it ends the loop as a failed result (invalid output, recorded by the
    seat), never as an error that would abort the episode."""
    if max_attempts < 1:
        raise ModelSpecError(f"generate_structured: max_attempts must be >= 1, got {max_attempts}")
    if config.response_schema is None:
        config = config.model_copy(update={"response_schema": schema.model_json_schema()})
    conversation = list(messages)
    attempts: list[StructuredAttempt] = []
    problem = ""
    for number in range(1, max_attempts + 1):
        with attempt_scope(number):
            completion = await _generate(model, conversation, config=config)
        if isinstance(completion, str):
            return StructuredResult[T](ok=False, attempts=attempts, error=completion)
        outcome: T | str | None
        if not completion.tool_calls:  # a reply cut for its size has none
            outcome = parse_reply(completion, schema)
        elif not config.tools:
            outcome = "you called a tool, but no tools are offered here"
        elif (outcome := tool_call_problem(completion)) is None:
            attempts.append(StructuredAttempt(attempt=number, completion=completion))
            call = completion.tool_calls[0]
            return StructuredResult[T](ok=True, tool_call=call, attempts=attempts)
        if not isinstance(outcome, str):
            attempts.append(StructuredAttempt(attempt=number, completion=completion))
            return StructuredResult[T](ok=True, value=outcome, attempts=attempts)
        problem = outcome
        attempts.append(StructuredAttempt(attempt=number, completion=completion, problem=problem))
        conversation += [
            *bad_reply(completion, problem),
            repair_message(problem, tools=bool(config.tools)),
        ]
    return StructuredResult[T](ok=False, attempts=attempts, error=problem)
