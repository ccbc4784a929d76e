"""Tool calls on the wire: OpenAI function calling, and JSON in text where an endpoint has
none.

Native: `openai_tools` and `openai_message` build the request body's `tools` and
`messages`, `openai_tool_calls` reads the reply's `tool_calls`. Fallback ("text" mode):
`tools_in_prompt` describes the tools in the system prompt and turns earlier calls and
their results into plain turns, and `calls_from_text` reads a reply that is exactly one
`{"tool": <name>, "arguments": {...}}` object naming an offered tool back into a call, so
callers see `Completion.tool_calls` either way and `Completion.tool_mode` records which.
`text_call_schema` is the JSON schema of such a reply (a llama.cpp grammar constrains
`local/` decoding to it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from confide.llm.structured import extract_json_text, loads_reply
from confide.llm.types import ChatMessage, Completion, ToolCall, ToolSpec

TEXT_CALL_ID = "text-call-{n}"
CATALOGUE_HEAD = "You can call these tools:"
PROBE_TOOL = ToolSpec(
    name="confide_probe",
    description="Confirms that tool calling works. Call it with ok set to true.",
    parameters={"type": "object", "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"]},
)
TOOL_PROBE_MESSAGES = (
    ChatMessage(role="user", content="Call the function confide_probe with ok set to true."),
)


def openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The `tools` field of a chat-completions request."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description,
                         "parameters": t.parameters},
        }
        for t in tools
    ]


def openai_message(message: ChatMessage) -> dict[str, Any]:
    """One message of a chat-completions request, tool calls and results included."""
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    return data


def openai_tool_calls(raw: Sequence[dict[str, Any]] | None) -> list[ToolCall]:
    """The calls of a reply's `message.tool_calls` (unknown entry types are skipped)."""
    calls = []
    for n, entry in enumerate(raw or ()):
        function = entry.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        calls.append(ToolCall(id=str(entry.get("id") or f"call-{n}"), name=function["name"],
                              arguments=arguments))
    return calls


def tool_catalogue(tools: Sequence[ToolSpec]) -> str:
    """The text-mode description of the tools and of how to call one."""
    lines = [f"- {t.name}: {t.description} Arguments (JSON schema): "
             f"{json.dumps(t.parameters, sort_keys=True)}" for t in tools]
    return (
        f"{CATALOGUE_HEAD}\n" + "\n".join(lines) + "\n"
        'To call a tool, reply with only this JSON object: {"tool": "<tool name>", '
        '"arguments": {<arguments>}}'
    )


def tools_in_prompt(
    messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]
) -> list[ChatMessage]:
    """`messages` for an endpoint without tool support: the catalogue appended to the
    system prompt (a new first system turn if there is none), each earlier call an
    assistant turn holding its JSON, each result a user turn naming the tool."""
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    result: list[ChatMessage] = []
    for message in messages:
        if message.tool_calls:
            text = "\n".join(
                json.dumps({"tool": c.name, "arguments": _arguments(c.arguments)})
                for c in message.tool_calls
            )
            result.append(ChatMessage(role="assistant", content=text))
        elif message.role == "tool":
            name = names.get(message.tool_call_id or "", "the tool")
            result.append(ChatMessage(role="user", content=f"Result of {name}: {message.content}"))
        else:
            result.append(message)
    catalogue = tool_catalogue(tools)
    if result and result[0].role == "system":
        result[0] = ChatMessage(role="system", content=f"{result[0].content}\n\n{catalogue}")
    else:
        result.insert(0, ChatMessage(role="system", content=catalogue))
    return result


def _arguments(text: str) -> Any:
    try:
        return loads_reply(text)
    except (json.JSONDecodeError, RecursionError):
        return text


def calls_from_text(text: str, tools: Sequence[ToolSpec]) -> list[ToolCall]:
    """The call a text-mode reply makes: one JSON object with exactly "tool" (an offered
    tool's name) and optionally "arguments"; anything else is no call (the text stays
    the reply)."""
    try:
        data = loads_reply(extract_json_text(text))
    except (json.JSONDecodeError, RecursionError):
        return []
    if not isinstance(data, dict) or set(data) - {"tool", "arguments"}:
        return []
    if data.get("tool") not in {t.name for t in tools}:
        return []
    arguments = data.get("arguments", {})
    return [ToolCall(id=TEXT_CALL_ID.format(n=0), name=data["tool"],
                     arguments=json.dumps(arguments))]


def text_call_schema(tools: Sequence[ToolSpec],
                     reply_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The JSON schema of a text-mode reply: a call of one of `tools`, or (when given) a
    reply valid against `reply_schema`."""
    calls: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": t.name}, "arguments": t.parameters},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    if reply_schema is not None:
        reply = dict(reply_schema)
        defs = reply.pop("$defs", None)
        schema: dict[str, Any] = {"anyOf": [*calls, reply]}
        if defs is not None:
            schema["$defs"] = defs
        return schema
    return {"anyOf": calls}


def with_text_calls(completion: Completion, tools: Sequence[ToolSpec]) -> Completion:
    """A text-mode completion with the call its text makes (if any) moved to
    `tool_calls`, and the fallback recorded as `tool_mode` "text"."""
    calls = calls_from_text(completion.text, tools)
    update: dict[str, Any] = {"tool_mode": "text"}
    if calls:
        update.update(tool_calls=calls, text="")
    return completion.model_copy(update=update)
