"""The mock chat model: scripted replies with injectable latency and faults.

Every test in confide uses it. Replies come from a list (served in order; `cycle=True`
starts again at the end, otherwise running out is a non-transient `script_exhausted`
error), from a function of the request, or from a file: `.jsonl` files hold one reply
per line, either a JSON string or an object with a "text" field (so replies can span
lines); any other file holds one reply per non-empty line. A faulted call does not use
up a scripted reply, so the retry gets the reply the script intended. Token counts are
estimated at one token per four characters (rounded up) plus three per message, the
usual rule of thumb, so accounting code has numbers to add.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.providers.faults import RAISING_FAULTS, FaultPlan, corrupt
from confide.llm.request import request_key
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage
from confide.untrusted import InputError, parse_jsonl, read_text

ReplyFunction = Callable[[list[ChatMessage], GenerateConfig], str]
Outputs = Sequence[str] | ReplyFunction | Path


def estimate_tokens(text: str) -> int:
    """Rough token count of a text: ceil(characters / 4)."""
    return math.ceil(len(text) / 4)


def load_replies(path: Path) -> list[str]:
    """Replies from a `.jsonl` file (JSON strings or {"text": ...}) or a text file."""
    try:
        text = read_text(path, "mock replies file")
        if path.suffix != ".jsonl":
            return [line for line in text.splitlines() if line.strip()]
        items = parse_jsonl(text, str(path))
    except InputError as exc:
        raise ModelSpecError(str(exc)) from None
    replies = []
    for number, item in items:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            replies.append(item["text"])
        elif isinstance(item, str):
            replies.append(item)
        else:
            raise ModelSpecError(
                f"{path}:{number}: a reply must be a JSON string or an object with a "
                f'"text" string, got {repr(item)[:60]}'
            )
    return replies


class MockModel:
    """A scripted `ChatModel` named `mock/<name>`."""

    def __init__(
        self,
        outputs: Outputs,
        *,
        name: str = "scripted",
        latency_s: float = 0.0,
        faults: FaultPlan | None = None,
        cycle: bool = False,
    ) -> None:
        if latency_s < 0:
            raise ModelSpecError(f"mock/{name}: latency_s must be >= 0, got {latency_s}")
        self.name = f"mock/{name}"
        self.latency_s = latency_s
        self.faults = faults or FaultPlan()
        self.cycle = cycle
        self._replies: list[str] = []
        self._function: ReplyFunction | None = None
        if isinstance(outputs, str):
            raise ModelSpecError(
                f"{self.name}: outputs must be a list of replies, a function or a Path, "
                f"not a single string ({outputs[:40]!r})"
            )
        if isinstance(outputs, Path):
            self._replies = load_replies(outputs)
        elif callable(outputs):
            self._function = outputs
        else:
            self._replies = list(outputs)
        if self._function is None and cycle and not self._replies:
            raise ModelSpecError(f"{self.name}: cycle=True needs at least one reply")
        self._lock = threading.Lock()
        self.calls = 0
        self._served = 0
        self._seen: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"MockModel(name={self.name!r}, latency_s={self.latency_s})"

    def _next_reply(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        """The reply the script intends for this call (without using it up)."""
        if self._function is not None:
            reply = self._function(messages, config)
            if not isinstance(reply, str):
                raise ModelSpecError(
                    f"{self.name}: the reply function must return a str, got {type(reply).__name__}"
                )
            return reply
        index = self._served
        if index >= len(self._replies):
            if not self.cycle:
                raise ModelError(
                    f"scripted replies exhausted after {len(self._replies)} replies",
                    model=self.name,
                    kind="script_exhausted",
                )
            index %= len(self._replies)
        return self._replies[index]

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        start = time.perf_counter()
        # Only drawn faults need the request key; skip the hashing otherwise.
        key = request_key(messages, config) if self.faults.rate else ""
        with self._lock:
            call_index = self.calls
            self.calls += 1
            occurrence = self._seen.get(key, 0)
            self._seen[key] = occurrence + 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        fault = self.faults.fault_for(call_index, key, occurrence)
        if fault is not None and fault in RAISING_FAULTS:
            raise self.faults.error(fault, self.name)
        request = list(messages)
        with self._lock:
            text = self._next_reply(request, config)
            if fault is None:
                self._served += 1
        if fault == "empty":
            text = ""
        elif fault == "malformed":
            text = corrupt(text)
        if config.max_tokens is not None and estimate_tokens(text) > config.max_tokens:
            text, finish_reason = text[: 4 * config.max_tokens], "length"
        else:
            finish_reason = "stop"
        usage = Usage(
            prompt_tokens=sum(estimate_tokens(m.content) + 3 for m in request),
            completion_tokens=estimate_tokens(text),
        )
        return Completion(
            model=self.name,
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            finish_reason=finish_reason,
        )
