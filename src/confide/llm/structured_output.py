"""How a JSON reply is asked of an OpenAI-compatible endpoint, and learning which way works.

Endpoints differ: OpenAI and vLLM take `response_format: {"type":
"json_schema", ...}`; llama.cpp's server rejects that type but takes `{"type":
"json_object", "schema": ...}` and constrains decoding to the schema; some servers take
neither. The modes, strongest first:

- `json_schema`: the OpenAI structured-output format (non-strict: pydantic schemas do not
  meet strict mode's rules);
- `json_object`: JSON mode, with the schema alongside for servers that use it;
- `text`: no response format; the schema is appended to the last user turn, and the
  structured-output repair loop (`confide.llm.structured`) does the rest.

A provider tries them in that order and keeps the first the endpoint accepts, once per
endpoint and model per run. Only a capability error steps down: a refusal that names the
response format. Any other error keeps its class, so a prompt that is too long is not
mistaken for a missing feature. `structured_output_mode` reports the mode for the
episode's trace header, negotiating it with one small request if no call has yet.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from confide.llm.errors import ModelError
from confide.llm.types import ChatMessage, ChatModel, GenerateConfig

StructuredOutput = Literal["json_schema", "json_object", "text"]
MODES: tuple[StructuredOutput, ...] = ("json_schema", "json_object", "text")
_ABOUT_FORMAT = re.compile(r"(?i)response_format|json_schema|json_object|guided|grammar|schema")

PROBE_MESSAGES = (ChatMessage(role="user", content='Reply with {"ok": true}.'),)
PROBE_CONFIG = GenerateConfig(
    max_tokens=8,
    response_schema={
        "title": "Probe",
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    },
)


def response_format(mode: StructuredOutput, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The `response_format` body field for `mode` (None: send none)."""
    if mode == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title", "response")))[:64]
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": False},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def schema_in_prompt(messages: Sequence[ChatMessage], schema: dict[str, Any]) -> list[ChatMessage]:
    """`messages` with the schema appended to the last user turn (text mode). The last
    user turn, not a new system message: several chat templates reject a system message
    anywhere but first."""
    note = (
        "\n\nReply with one JSON object, and nothing else, that matches this JSON schema:\n"
        + json.dumps(schema, ensure_ascii=False)
    )
    result = list(messages)
    for index in range(len(result) - 1, -1, -1):
        if result[index].role == "user":
            result[index] = ChatMessage(role="user", content=result[index].content + note)
            return result
    return [*result, ChatMessage(role="user", content=note.lstrip())]


def about_response_format(message: str) -> bool:
    """Whether a refusal names the response format (it is then a capability error)."""
    return bool(_ABOUT_FORMAT.search(message))


def negotiates(spec: str) -> bool:
    """Whether `spec`'s provider chooses its structured-output mode per endpoint (its
    registry row lists several modes); an unknown provider does not."""
    from confide.llm.registry import get_provider

    row = get_provider(spec.partition("/")[0])
    return row is not None and row.negotiates


@runtime_checkable
class Negotiating(Protocol):
    """A provider that chooses a structured-output mode per endpoint."""

    @property
    def structured_output(self) -> StructuredOutput | None: ...

    async def negotiate(self) -> StructuredOutput: ...


def _provider(model: ChatModel) -> object:
    """The provider under a stack of wrappers (each keeps the model it wraps in `inner`)."""
    inner: object = model
    while (below := getattr(inner, "inner", None)) is not None:
        inner = below
    return inner


async def structured_output_mode(model: ChatModel) -> StructuredOutput | None:
    """The mode `model`'s provider uses, negotiated now if no call has chosen it yet; None
    for providers without modes, or when the endpoint cannot be reached now (the
    episode's own calls then negotiate, and fail with their own, classified errors)."""
    provider = _provider(model)
    if not isinstance(provider, Negotiating):
        return None
    try:
        return await provider.negotiate()
    except ModelError:
        return None
