"""The mock chat model: scripted replies with injectable latency and faults.

Every test in confide uses it. Replies (text, or scripted tool calls: a `ToolCall` or a
tuple of them, or a `.jsonl` line {"tool_calls": [{"name": ..., "arguments": {...}}]})
come from a list (served in order; `cycle=True`
starts again at the end, otherwise running out is a non-transient `script_exhausted`
error), from a function of the request, or from a file: `.jsonl` files hold one reply
per line, either a JSON string or an object with a "text" field (so replies can span
lines); any other file holds one reply per non-empty line. A faulted call does not use
up a scripted reply, so the retry gets the reply the script intended. Token counts are
estimated at one token per four characters (rounded up) plus three per message, the
usual rule of thumb, so accounting code has numbers to add.

With `tool_mode="native"` (the default) the mock is an endpoint with function calling:
scripted calls come back in `Completion.tool_calls`. With `tool_mode="text"` it is one
without: it sees the tools described in the prompt (`tools_in_prompt`) and its text
replies are read back into calls (`with_text_calls`), so the fallback path runs without a
server.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.providers.faults import RAISING_FAULTS, FaultPlan, corrupt
from confide.llm.request import request_key
from confide.llm.tools import tools_in_prompt, with_text_calls
from confide.llm.types import ChatMessage, Completion, GenerateConfig, ToolCall, Usage
from confide.untrusted import InputError, parse_jsonl, read_text

Reply = str | ToolCall | tuple[ToolCall, ...]
"""A scripted reply: text, one tool call, or several."""
ReplyFunction = Callable[[list[ChatMessage], GenerateConfig], Reply]
Outputs = Sequence[Reply] | ReplyFunction | Path


def estimate_tokens(text: str) -> int:
    """Rough token count of a text: ceil(characters / 4)."""
    return math.ceil(len(text) / 4)


def _scripted_calls(item: dict[str, Any], where: str) -> tuple[ToolCall, ...]:
    calls = item["tool_calls"]
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls
    ):
        raise ModelSpecError(f'{where}: "tool_calls" must be a list of {{"name": ...}} objects')
    return tuple(
        ToolCall(id=f"call-{n}", name=c["name"], arguments=json.dumps(c.get("arguments", {})))
        for n, c in enumerate(calls)
    )


def load_replies(path: Path) -> list[Reply]:
    """Replies from a `.jsonl` file (JSON strings, {"text": ...} or {"tool_calls": [...]})
    or a text file."""
    try:
        text = read_text(path, "mock replies file")
        if path.suffix != ".jsonl":
            return [line for line in text.splitlines() if line.strip()]
        items = parse_jsonl(text, str(path))
    except InputError as exc:
        raise ModelSpecError(str(exc)) from None
    replies: list[Reply] = []
    for number, item in items:
        if isinstance(item, dict) and "tool_calls" in item:
            replies.append(_scripted_calls(item, f"{path}:{number}"))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
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
        tool_mode: Literal["native", "text"] = "native",
    ) -> None:
        if latency_s < 0:
            raise ModelSpecError(f"mock/{name}: latency_s must be >= 0, got {latency_s}")
        self.name = f"mock/{name}"
        self.latency_s = latency_s
        self.faults = faults or FaultPlan()
        if tool_mode not in ("native", "text"):
            raise ModelSpecError(
                f"{self.name}: tool_mode must be native or text, got {tool_mode!r}"
            )
        self.cycle = cycle
        self.tool_mode = tool_mode
        self._replies: list[Reply] = []
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

    def _next_reply(self, messages: list[ChatMessage], config: GenerateConfig) -> Reply:
        """The reply the script intends for this call (without using it up)."""
        if self._function is not None:
            reply = self._function(messages, config)
            if not isinstance(reply, str | ToolCall | tuple):
                raise ModelSpecError(
                    f"{self.name}: the reply function must return a str or tool call(s), "
                    f"got {type(reply).__name__}"
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
        text_tools = config.tools if self.tool_mode == "text" else ()
        if text_tools:
            request = tools_in_prompt(request, text_tools)
            config = config.model_copy(update={"tools": ()})
        with self._lock:
            reply = self._next_reply(request, config)
            if fault is None:
                self._served += 1
        calls = (reply,) if isinstance(reply, ToolCall) else reply
        if isinstance(calls, tuple):
            if not config.tools:
                raise ModelSpecError(
                    f"{self.name}: the script makes a tool call but the request offers no "
                    "tools (or this mock has tool_mode='text': script the JSON text instead)"
                )
            return Completion(
                model=self.name,
                text="",
                usage=Usage(prompt_tokens=_prompt_tokens(request)),
                latency_s=time.perf_counter() - start,
                finish_reason="tool_calls",
                tool_calls=list(calls),
                tool_mode="native",
            )
        text = calls
        if fault == "empty":
            text = ""
        elif fault == "malformed":
            text = corrupt(text)
        if config.max_tokens is not None and estimate_tokens(text) > config.max_tokens:
            text, finish_reason = text[: 4 * config.max_tokens], "length"
        else:
            finish_reason = "stop"
        usage = Usage(
            prompt_tokens=_prompt_tokens(request), completion_tokens=estimate_tokens(text)
        )
        completion = Completion(
            model=self.name,
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            finish_reason=finish_reason,
            tool_mode="native" if config.tools else None,
        )
        return with_text_calls(completion, text_tools) if text_tools else completion


def _prompt_tokens(request: Sequence[ChatMessage]) -> int:
    return sum(estimate_tokens(m.content) + 3 for m in request)
