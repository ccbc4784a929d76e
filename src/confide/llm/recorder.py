"""Recording every prompt and completion, for traces.

`with_recorder(model, sink)` wraps a model so that each call, successful or not, is
passed to `sink` as a `ModelCallRecord`; environments use it to write model calls into
the episode trace (`trace_fields()` gives the fields of the core trace's `model_call`
event). `attempt` is the repair attempt within `generate_structured` (1 for plain
calls): the structured helper sets it through a context variable, so a recorder
anywhere below it sees which attempt a call belongs to without extra arguments.
Errors are recorded by their (already redacted) message and their class, so no key
reaches a trace and every error says whether it was transient. `retries` counts the
provider attempts the retry wrapper below made again for this call (`count_retry`, through
a context variable the recorder sets per call), so the trace says what a call cost in
attempts.

A reply over `MAX_REPLY_CHARS` is cut before it is recorded or returned (`bounded`): the
caller, the trace and the call journal all hold its first `KEPT_CHARS` characters, its
size and its SHA-256 (`Completion.cut`), and `llm.structured` counts it as an invalid
reply (a model answering 10 MB of text once made a trace no reader accepted).
The limit is far above any reply a model is asked for (a million characters is about
250,000 tokens, twice the longest output of current models), so only a broken or
hostile endpoint meets it; the trace writer's own budget (`core.trace.EVENT_BUDGET`)
bounds the whole trace.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, Field

from confide.llm.errors import ModelError
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig, ReplyCut

MAX_REPLY_CHARS = 1_000_000
"""The largest reply kept whole, in characters of text, tool-call names and arguments."""
KEPT_CHARS = 4_000
"""How much of the text of a reply over the limit is kept, to show what it was."""

_ATTEMPT: ContextVar[int] = ContextVar("confide_llm_attempt", default=1)
_RETRIES: ContextVar[list[int] | None] = ContextVar("confide_llm_retries", default=None)


def count_retry() -> None:
    """Count one retried provider attempt for the call being recorded, if one is."""
    cell = _RETRIES.get()
    if cell is not None:
        cell[0] += 1


@contextmanager
def attempt_scope(attempt: int) -> Iterator[None]:
    """Mark the calls made inside the block as belonging to repair attempt `attempt`."""
    token = _ATTEMPT.set(attempt)
    try:
        yield
    finally:
        _ATTEMPT.reset(token)


def bounded(completion: Completion) -> Completion:
    """`completion`, or, when its text and tool calls together are over `MAX_REPLY_CHARS`
    characters, its text's first `KEPT_CHARS` characters with `cut` set (the size and the
    SHA-256 of the text's UTF-8 followed by, per tool call, NUL, name, NUL, arguments)
    and no tool calls or log probabilities. Idempotent."""
    calls = completion.tool_calls
    size = len(completion.text) + sum(len(c.name) + len(c.arguments) for c in calls)
    if size <= MAX_REPLY_CHARS:
        return completion
    digest = hashlib.sha256(completion.text.encode())
    for call in calls:
        digest.update(b"\0" + call.name.encode() + b"\0" + call.arguments.encode())
    return completion.model_copy(update={
        "text": completion.text[:KEPT_CHARS],
        "tool_calls": [],
        "logprobs": None,
        "cut": ReplyCut(chars=size, sha256=digest.hexdigest()),
    })


class ModelCallRecord(BaseModel):
    """One model call: the request, and the completion or the error it ended in."""

    schema_version: int = 1
    model: str
    messages: list[ChatMessage]
    config: GenerateConfig
    completion: Completion | None = None
    error: str | None = None
    error_kind: str | None = None
    error_class: str | None = None
    attempt: int = Field(default=1, ge=1)
    retries: int = Field(default=0, ge=0)

    def trace_fields(self) -> dict[str, Any]:
        """The fields of a core-trace `model_call` event (without `seat`/`purpose`)."""
        completion = self.completion
        return {
            "model": self.model,
            "messages": [m.model_dump(mode="json") for m in self.messages],
            "config": self.config.model_dump(mode="json"),
            "completion": None if completion is None else completion.model_dump(mode="json"),
            "error": self.error,
            "error_class": self.error_class,
            "latency_s": 0.0 if completion is None else completion.latency_s,
            "cached": False if completion is None else completion.cached,
        }


RecordSink = Callable[[ModelCallRecord], None]


class RecordingModel:
    """Passes a `ModelCallRecord` of every call to a sink."""

    def __init__(self, inner: ChatModel, sink: RecordSink) -> None:
        self.name = inner.name
        self.inner = inner
        self.sink = sink

    def __repr__(self) -> str:
        return f"RecordingModel({self.inner!r})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        record = ModelCallRecord(
            model=self.name, messages=list(messages), config=config, attempt=_ATTEMPT.get()
        )
        retries = [0]
        token = _RETRIES.set(retries)
        try:
            completion = bounded(await self.inner.generate(messages, config=config))
        except ModelError as exc:
            failed = {"error": str(exc), "error_kind": exc.kind, "error_class": exc.error_class,
                      "retries": retries[0]}
            self.sink(record.model_copy(update=failed))
            raise
        finally:
            _RETRIES.reset(token)
        self.sink(record.model_copy(update={"completion": completion, "retries": retries[0]}))
        return completion


def with_recorder(model: ChatModel, sink: RecordSink) -> ChatModel:
    """`model`, with every call recorded into `sink`."""
    return RecordingModel(model, sink)
