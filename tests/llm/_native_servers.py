"""Local fakes of the Anthropic Messages API and the Gemini API on 127.0.0.1, speaking
their documented request and response shapes (non-streaming), for the native providers'
tests. Each logs every request body and header, counts requests in flight, can be told
to fail the next requests with a given status, body and headers, and simulates the
vendor's prompt cache and thinking so usage carries cache reads and thinking tokens.

- Anthropic (`POST /v1/messages`): content blocks (text, tool_use, thinking), `usage`
  with `input_tokens` excluding cache reads and writes, `cache_read_input_tokens`,
  `cache_creation_input_tokens` (a prefix up to a `cache_control` breakpoint is written
  once and read by later requests that start with it) and
  `output_tokens_details.thinking_tokens`; errors as `{"type": "error", "error":
  {"type", "message"}}`.
- Gemini (`POST /v1beta/models/{model}:generateContent`): `candidates[0].content.parts`
  (text, `thought` parts, `functionCall`), `usageMetadata` with `promptTokenCount`
  (cached included), `cachedContentTokenCount`, `candidatesTokenCount` (thoughts
  excluded) and `thoughtsTokenCount`; errors as `{"error": {"code", "message",
  "status"}}`. Gemini's implicit cache is simulated over the conversation's leading
  contents.
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

from confide.llm.providers.json_instance import minimal_instance
from confide.testing.json_server import JsonServer

THOUGHT_TOKENS = 12
"""Hidden reasoning tokens the fakes report for a request that asks for thinking."""


def tokens(value: Any) -> int:
    """A stand-in token count: a quarter of the characters of the JSON text."""
    return len(json.dumps(value, sort_keys=True)) // 4


def _unmarked(value: Any) -> Any:
    """`value` without `cache_control` markers: the cache keys on content, and a block
    marked in one request is the same content unmarked in the next."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


class Failure:
    """A scripted error reply."""

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        self.status, self.body, self.headers = status, body, headers


class FakeVendor(JsonServer):
    """What both fakes share (request log, scripted failures, latency, the simulated
    cache); subclasses implement `route`."""

    protocol_version = "HTTP/1.1"
    api_root = ""

    def __init__(self, latency_s: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.failures: list[Failure] = []
        self.latency_s = latency_s
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self.cached: set[str] = set()
        super().__init__()

    def fail_next(self, status: int, body: dict[str, Any], **headers: str) -> None:
        self.failures.append(Failure(status, body, headers))

    def respond(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            failure = self.failures.pop(0) if self.failures else None
        try:
            if self.latency_s:
                time.sleep(self.latency_s)
            if failure is not None:
                return failure.status, failure.body, failure.headers
            with self._lock:
                status, reply = self.route(path, body)
            return status, reply, {}
        finally:
            with self._lock:
                self.in_flight -= 1

    def route(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and JSON reply for a request to `path`."""
        raise NotImplementedError

    def cache(self, boundaries: list[Any], marked: list[Any]) -> tuple[int, int]:
        """Tokens read from and written to the simulated cache: a request reads the
        longest of its prefixes (`boundaries`, at each turn) written before, and writes
        its prefixes that end at a breakpoint (`marked`, shortest first)."""
        sizes = {json.dumps(_unmarked(p), sort_keys=True): tokens(_unmarked(p))
                 for p in boundaries}
        read = max((n for key, n in sizes.items() if key in self.cached), default=0)
        written = max(0, tokens(_unmarked(marked[-1])) - read) if marked else 0
        self.cached.update(json.dumps(_unmarked(p), sort_keys=True) for p in marked)
        return read, written


class FakeAnthropic(FakeVendor):
    """`POST /v1/messages` as Anthropic documents it."""

    def route(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path != "/v1/messages":
            return 404, {"type": "error",
                         "error": {"type": "not_found_error", "message": f"no route {path}"}}
        if not isinstance(body.get("max_tokens"), int) or not body.get("messages"):
            return 400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "max_tokens: Field required"}}
        thinking = (body.get("thinking") or {}).get("type") == "enabled"
        if thinking and (body.get("tool_choice") or {}).get("type") in ("tool", "any"):
            return 400, {"type": "error", "error": {
                "type": "invalid_request_error",
                "message": "Thinking may not be enabled when tool_choice forces tool use."}}
        if thinking and any(
            m["role"] == "assistant"
            and any(b.get("type") == "tool_use" for b in m["content"])
            and m["content"][0].get("type") not in ("thinking", "redacted_thinking")
            for m in body["messages"]
        ):
            return 400, {"type": "error", "error": {
                "type": "invalid_request_error",
                "message": "Expected `thinking` or `redacted_thinking`, but found `tool_use`."}}
        content: list[dict[str, Any]] = []
        if thinking:
            content.append({"type": "thinking", "thinking": "Let me see.", "signature": "c2ln"})
        tools = {t["name"]: t for t in body.get("tools") or []}
        reply_tool = tools.get("confide_reply")
        last = body["messages"][-1]["content"][-1]
        others = [name for name in tools if name != "confide_reply"]
        if others and str(last.get("text", "")).startswith("call "):
            content.append({"type": "tool_use", "id": f"toolu_{len(self.requests)}",
                            "name": others[0], "input": {"q": 1}})
            stop = "tool_use"
        elif reply_tool is not None:
            content.append({"type": "tool_use", "id": f"toolu_{len(self.requests)}",
                            "name": "confide_reply",
                            "input": minimal_instance(reply_tool["input_schema"])})
            stop = "tool_use"
        else:
            content.append({"type": "text", "text": "Sure."})
            stop = "end_turn"
        read, written = self.cache(*self._prefixes(body))
        total = tokens(body.get("system")) + tokens(body.get("tools")) + tokens(body["messages"])
        output = tokens(content) + (THOUGHT_TOKENS if thinking else 0)
        usage: dict[str, Any] = {
            "input_tokens": max(0, total - read - written),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "output_tokens": output,
        }
        if thinking:
            usage["output_tokens_details"] = {"thinking_tokens": THOUGHT_TOKENS}
        return 200, {"id": f"msg_{len(self.requests)}", "type": "message",
                     "role": "assistant", "model": body["model"], "content": content,
                     "stop_reason": stop, "stop_sequence": None, "usage": usage}

    @staticmethod
    def _prefixes(body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        """The request's prefixes (tools, system, messages in that order) at every turn,
        and those that end at a `cache_control` breakpoint, shortest first."""
        system = body.get("system") or []
        head = [body.get("tools"), system]
        boundaries: list[Any] = [head]
        marked: list[Any] = []
        if any("cache_control" in b for b in system if isinstance(b, dict)):
            marked.append(head)
        for index, message in enumerate(body["messages"]):
            prefix = [*head, body["messages"][: index + 1]]
            boundaries.append(prefix)
            if any("cache_control" in b for b in message["content"] if isinstance(b, dict)):
                marked.append(prefix)
        return boundaries, marked


class FakeGemini(FakeVendor):
    """`POST /v1beta/models/{model}:generateContent` (or `/v1/...`) as Google documents it."""

    _ROUTE = re.compile(r"^/v1(?:beta)?/models/([^:/]+):generateContent$")

    def route(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self._ROUTE.match(path) is None:
            return 404, {"error": {"code": 404, "message": f"no route {path}",
                                   "status": "NOT_FOUND"}}
        config = body.get("generationConfig") or {}
        thinking = config.get("thinkingConfig") or {}  # keys in either JSON spelling
        budget = thinking.get("thinkingBudget", thinking.get("thinking_budget", 1))
        thinks = bool(thinking) and budget != 0
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        parts: list[dict[str, Any]] = []
        if thinks and (thinking.get("includeThoughts") or thinking.get("include_thoughts")):
            parts.append({"text": "Let me see.", "thought": True})
        contents = body.get("contents") or []
        last = contents[-1]["parts"][-1] if contents and contents[-1]["parts"] else {}
        declared = [f for t in body.get("tools") or [] for f in t.get("functionDeclarations", [])]
        if declared and str(last.get("text", "")).startswith("call "):
            parts.append({"functionCall": {"name": declared[0]["name"], "args": {"q": 1}},
                          "thoughtSignature": "c2ln"})
        elif schema is not None:
            parts.append({"text": json.dumps(minimal_instance(schema))})
        else:
            parts.append({"text": "Sure."})
        prefixes = [[body.get("systemInstruction"), body.get("tools"), contents[:n]]
                    for n in range(1, len(contents) + 1)]
        read, _ = self.cache(prefixes, prefixes)  # implicit caching: every prefix
        prompt = tokens(body.get("systemInstruction")) + tokens(body.get("tools"))
        prompt += tokens(contents)
        usage: dict[str, Any] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": tokens(parts),
            "totalTokenCount": prompt + tokens(parts) + (THOUGHT_TOKENS if thinks else 0),
        }
        if read:
            usage["cachedContentTokenCount"] = read
        if thinks:
            usage["thoughtsTokenCount"] = THOUGHT_TOKENS
        return 200, {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage,
            "modelVersion": "fake",
        }
