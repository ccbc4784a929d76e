"""Canonical request keys, shared by the response cache, the replay provider and the
mock's per-request fault draws: the same request always hashes to the same key, across
processes and Python versions."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from confide.llm.types import ChatMessage, GenerateConfig


def request_payload(
    messages: Sequence[ChatMessage], config: GenerateConfig, model: str | None = None
) -> dict[str, Any]:
    """The JSON-able content of a request; `model` is included when given."""
    payload: dict[str, Any] = {
        "messages": [m.model_dump(mode="json") for m in messages],
        "config": config.model_dump(mode="json"),
    }
    if model is not None:
        payload["model"] = model
    return payload


def request_key(
    messages: Sequence[ChatMessage], config: GenerateConfig, model: str | None = None
) -> str:
    """SHA-256 hex digest of the canonical JSON of the request."""
    canonical = json.dumps(
        request_payload(messages, config, model),
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
