"""Named mock models, usable from the CLI and YAML without code.

Built in: `mock/echo` (replies with the last user message) and `mock/json` (replies with
a minimal JSON instance of `config.response_schema`, or `{}` without one, so
schema-driven agents run under the mock). Tests and environments add their own with
`register_mock(name, factory)`, an explicit call (nothing registers itself at import).
A registered name is built by its factory; any other name with `outputs=[...]` (or
`outputs_file=`) is a scripted mock; otherwise the name must be built in. Built-in mocks
accept the `MockModel` options (`latency_s`, `faults`, `cycle`); registered factories
receive the options as keyword arguments.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from confide.llm.errors import ModelSpecError
from confide.llm.providers.faults import FaultPlan
from confide.llm.providers.json_instance import minimal_instance
from confide.llm.providers.mock import MockModel, Outputs
from confide.llm.types import ChatMessage, ChatModel, GenerateConfig

MockFactory = Callable[..., ChatModel]
MOCK_OPTIONS = frozenset({"outputs", "outputs_file", "latency_s", "faults", "cycle", "tool_mode"})


def echo_reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """The content of the last user message ("" if there is none)."""
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def json_reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """A minimal JSON instance of the requested schema."""
    schema = config.response_schema
    return json.dumps(minimal_instance(schema) if schema is not None else {})


_BUILTIN: Mapping[str, Callable[[list[ChatMessage], GenerateConfig], str]] = {
    "echo": echo_reply,
    "json": json_reply,
}
_registered: dict[str, MockFactory] = {}
_lock = threading.Lock()


def register_mock(name: str, factory: MockFactory, *, replace: bool = False) -> None:
    """Make `mock/<name>` build models with `factory(**options)`."""
    if not name or "/" in name:
        raise ModelSpecError(f"mock name must be non-empty and contain no '/', got {name!r}")
    if name in _BUILTIN:
        raise ModelSpecError(f"mock/{name} is built in and cannot be replaced")
    with _lock:
        if name in _registered and not replace:
            raise ModelSpecError(f"mock/{name} is already registered (pass replace=True)")
        _registered[name] = factory


def unregister_mock(name: str) -> None:
    """Forget a registered mock (no error if it is not registered)."""
    with _lock:
        _registered.pop(name, None)


def mock_names() -> list[str]:
    """Names usable as `mock/<name>` without `outputs`."""
    with _lock:
        return sorted({*_BUILTIN, *_registered})


def _fault_plan(value: Any, name: str) -> FaultPlan | None:
    if value is None or isinstance(value, FaultPlan):
        return value
    if isinstance(value, Mapping):
        try:
            return FaultPlan.model_validate(dict(value))
        except ValidationError as exc:
            raise ModelSpecError(f"mock/{name}: invalid faults: {exc}") from None
    raise ModelSpecError(f"mock/{name}: faults must be a FaultPlan or a mapping, got {value!r}")


def make_mock(name: str, **options: Any) -> ChatModel:
    """Build `mock/<name>` from options, the built-ins or the registry."""
    with _lock:
        factory = _registered.get(name)
    if factory is not None:
        return factory(**options)
    unknown = sorted(options.keys() - MOCK_OPTIONS)
    if unknown:
        raise ModelSpecError(
            f"mock/{name}: unknown option(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(MOCK_OPTIONS))})"
        )
    outputs: Outputs
    if "outputs" in options:
        outputs = options["outputs"]
    elif "outputs_file" in options:
        outputs = Path(options["outputs_file"])
    elif name in _BUILTIN:
        outputs = _BUILTIN[name]
    else:
        raise ModelSpecError(
            f"unknown mock model mock/{name}: pass outputs=... or use one of "
            f"{', '.join('mock/' + n for n in mock_names())}"
        )
    return MockModel(
        outputs,
        name=name,
        latency_s=float(options.get("latency_s", 0.0)),
        faults=_fault_plan(options.get("faults"), name),
        cycle=bool(options.get("cycle", False)),
        tool_mode=options.get("tool_mode", "native"),
    )
