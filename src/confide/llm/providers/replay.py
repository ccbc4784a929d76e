"""Replaying recorded model calls from a trace, for exact re-runs.

`replay/<path>` reads the `model_call` events of a trace file, gzipped or plain (other
lines are ignored, as are calls that ended in an error) and answers each request with the
recorded completion of the same request: messages and config, hashed like the cache
does. Identical requests recorded several times are answered in recorded order. When a
request was not recorded (a prompt changed, say), the next unused recorded call in file
order answers it, so a replay survives small prompt edits; `strict=True` turns that
fallback off. When nothing is left to answer with, the error names the file and the
request. The `seat` option keeps only the calls recorded for one seat, which makes the
order fallback meaningful when several seats shared a trace.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from confide.core.trace import TraceError, restore_prompt, trace_text
from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.request import request_key
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage
from confide.untrusted import InputError, parse_jsonl


class RecordedCall(BaseModel):
    """A `model_call` trace line, as far as replay needs it."""

    seat: str | None = None
    model: str
    messages: list[ChatMessage]
    config: GenerateConfig
    completion: Completion


def load_recorded_calls(path: Path, seat: str | None = None) -> list[RecordedCall]:
    """The successful model calls of a trace file, in file order."""
    try:
        events = parse_jsonl(trace_text(path, "replay trace"), str(path))
    except InputError as exc:
        raise ModelSpecError(str(exc)) from None
    calls = []
    prompts: dict[int, list[Any]] = {}
    for number, event in events:
        if not isinstance(event, dict) or event.get("kind") != "model_call":
            continue
        try:
            event = restore_prompt(event, number, prompts, str(path))
        except TraceError as exc:
            raise ModelSpecError(str(exc)) from None
        if event.get("completion") is None:
            continue
        try:
            call = RecordedCall.model_validate(event)
        except ValidationError as exc:
            raise ModelSpecError(f"{path}:{number}: bad model_call event: {exc}") from None
        if seat is None or call.seat == seat:
            calls.append(call)
    return calls


class RecordedAnswers:
    """Recorded answers by the key of their request, each given once: identical requests
    in recorded order and, with `fallback`, an unmatched request the next unused answer
    in recorded order. Shared by replay and the run's call journal
    (`confide.runner.journal`)."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._by_key: dict[str, deque[int]] = {}
        count = 0
        for count, key in enumerate(keys, start=1):
            self._by_key.setdefault(key, deque()).append(count - 1)
        self._used = [False] * count
        self._cursor = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._used)

    def take(self, key: str, *, fallback: bool = False) -> int | None:
        """The index of the answer to give the request `key`, now used; None if none."""
        with self._lock:
            queue = self._by_key.get(key)
            while queue:
                index = queue.popleft()
                if not self._used[index]:
                    self._used[index] = True
                    return index
            if not fallback:
                return None
            while self._cursor < len(self._used) and self._used[self._cursor]:
                self._cursor += 1
            if self._cursor == len(self._used):
                return None
            self._used[self._cursor] = True
            return self._cursor


class ReplayModel:
    """Answers requests with completions recorded in a trace."""

    def __init__(self, path: str | Path, *, seat: str | None = None, strict: bool = False) -> None:
        self.path = Path(path)
        self.name = f"replay/{path}"
        self.strict = strict
        self._calls = load_recorded_calls(self.path, seat)
        self._answers = RecordedAnswers(request_key(c.messages, c.config) for c in self._calls)

    def __repr__(self) -> str:
        return f"ReplayModel(path={str(self.path)!r}, calls={len(self._calls)})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        start = time.perf_counter()
        index = self._answers.take(request_key(messages, config), fallback=not self.strict)
        if index is None:
            last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
            why = (
                "no unused recorded call matches it (strict replay)"
                if self.strict
                else f"all {len(self._calls)} recorded calls are used"
            )
            raise ModelError(
                f"no recorded answer in {self.path} for the request with last user message "
                f"{last_user[:80]!r}: {why}",
                model=self.name,
                kind="replay_miss",
            )
        recorded = self._calls[index].completion
        return Completion(
            model=self.name,
            text=recorded.text,
            usage=Usage(
                prompt_tokens=recorded.usage.prompt_tokens,
                completion_tokens=recorded.usage.completion_tokens,
            ),
            latency_s=time.perf_counter() - start,
            finish_reason=recorded.finish_reason,
            tool_calls=recorded.tool_calls,
            tool_mode=recorded.tool_mode,
        )


def make_replay(path: str, **options: Any) -> ReplayModel:
    """Build `replay/<path>` (options `seat` and `strict`; the registry row checks names)."""
    return ReplayModel(path, seat=options.get("seat"), strict=bool(options.get("strict")))
