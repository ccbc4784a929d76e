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
attempts (issue 32 item 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, Field

from confide.llm.errors import ModelError
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig

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
            completion = await self.inner.generate(messages, config=config)
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
