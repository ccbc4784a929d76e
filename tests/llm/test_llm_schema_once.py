"""The reply schema reaches the model once per request, in every structured-output mode: as the
response format where the endpoint takes one, else appended by
the provider to the last user turn, and never also written into the prompt text by a
benchmark's prompts. One small episode of Sotopia-ToM and of CalBench against the local
fake server (Incognita's tool-calling seats, on an endpoint without function calling, get
the model layer's text fallback for tools, which describes the reply format itself:
`confide.llm.tools`, not the prompts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _openai_servers import FakeServer, run_one

MODEL = "openai-api/fake-schema"
NOTE = "matches this JSON schema:"  # the provider's text-mode note (structured_output.py)


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer("vllm")
    yield server
    server.close()


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
    return schema if isinstance(schema, dict) else None


def written(schema: dict[str, Any], text: str) -> int:
    """How often the schema's properties appear in `text`, compact or spaced."""
    props = schema.get("properties", {})
    return sum(text.count(json.dumps(props, separators=s)) for s in ((",", ":"), (", ", ": ")))


@pytest.mark.parametrize("benchmark", ["sotopia-tom", "calbench"])
@pytest.mark.parametrize("mode", ["json_schema", "text"])
def test_the_schema_goes_once(benchmark: str, mode: str, fake: FakeServer, tmp_path: Path) -> None:
    run_one(benchmark, MODEL, tmp_path / "run", fake.base_url, structured_output=mode)
    asked = [b for b in fake.requests if b.get("response_format") or NOTE in json.dumps(b)]
    assert asked
    for body in asked:
        text = "\n".join(str(m.get("content") or "") for m in body["messages"])
        schema = schema_of(body)
        if schema is not None:  # json_schema mode: the response format only
            assert NOTE not in text and written(schema, text) == 0
        else:  # text mode: the provider's one note, nothing the prompts wrote
            assert text.count(NOTE) == 1
            copy = json.loads(text.split(NOTE, 1)[1])
            assert written(copy, text) == 1
