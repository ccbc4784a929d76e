"""The provider registry: every model provider is one `Provider` row, and everything the
rest of confide knows about a provider is read from its row.

A row carries the provider's name (the part before the slash of `provider/model`), its
factory (`factory(model, **options) -> ChatModel`, given as the object or lazily as
`"module:attr"` so listing providers imports no SDK), the default number of requests
its models keep in flight together, the structured-output modes it may use (more than
one: negotiated per endpoint, see `confide.llm.structured_output`), its options with a
line of help each (None: the factory checks its own), the optional extra that installs
its SDK and the modules that extra provides (checked before the factory runs, so a
missing SDK is one line naming `pip install 'confide[extra]'`), and whether its retries
back off (there is no server to spare for the mock and replay providers).

The builtin rows are `BUILTIN`, at the end of this module. A plugin adds a row with
`register_provider` at import time, or through a `confide.models` entry point whose object
is a `Provider` (or, the older form, a bare factory, which gets a row with defaults).
Builtins win over plugins: a plugin never replaces a builtin.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confide import plugins
from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.types import ChatModel

Factory = Callable[..., ChatModel]


@dataclass(frozen=True)
class Provider:
    """One model provider (see the module docstring for each field)."""

    name: str
    factory: Factory | str
    about: str = ""
    max_connections: int | None = None
    """Requests in flight at once over all of this provider's models (None: no limit),
    unless a model sets its own `max_connections`."""
    structured_output: tuple[str, ...] = ()
    options: Mapping[str, str] | None = field(default_factory=dict)
    extra: str | None = None
    requires: tuple[str, ...] = ()
    backoff: bool = True

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ModelSpecError(f"provider name {self.name!r} must be non-empty, without '/'")
        if self.max_connections is not None and self.max_connections < 1:
            raise ModelSpecError(
                f"provider {self.name}: max_connections must be >= 1, got {self.max_connections}"
            )

    @property
    def negotiates(self) -> bool:
        """Whether the structured-output mode is chosen per endpoint (several modes)."""
        return len(self.structured_output) > 1

    @property
    def install_hint(self) -> str:
        return f"pip install 'confide[{self.extra}]'" if self.extra else ""

    def missing(self) -> str | None:
        """The first required module that cannot be imported, or None."""
        for module in self.requires:
            try:
                found = importlib.util.find_spec(module)
            except ModuleNotFoundError:  # a parent package is missing
                found = None
            if found is None:
                return module
        return None

    def build(self, model: str, options: Mapping[str, Any]) -> ChatModel:
        """The bare model `name/model`: options checked, the extra checked, then built."""
        spec = f"{self.name}/{model}"
        if self.options is not None:
            unknown = sorted(options.keys() - self.options.keys())
            if unknown:
                known = ", ".join(sorted(self.options)) or "none"
                raise ModelSpecError(
                    f"{spec}: unknown option(s) {', '.join(unknown)} (known: {known})"
                )
        absent = self.missing()
        if absent is not None:
            raise ModelError(
                f"the {self.name} provider needs the {absent!r} package: {self.install_hint}",
                model=spec,
                kind="missing_extra",
            )
        made = self._factory()(model, **options)
        if not isinstance(made, ChatModel):
            raise ModelSpecError(
                f"{spec}: the {self.name} provider's factory returned a "
                f"{type(made).__name__}, not a ChatModel (a `name` and an async `generate`)"
            )
        return made

    def _factory(self) -> Factory:
        if not isinstance(self.factory, str):
            return self.factory
        module, _, attr = self.factory.partition(":")
        loaded: Factory = getattr(importlib.import_module(module), attr)
        return loaded


_lock = threading.Lock()
_registered: dict[str, Provider] = {}


def _builtin() -> dict[str, Provider]:
    return _BY_NAME


def register_provider(provider: Provider, *, replace: bool = False) -> Provider:
    """Add `provider` for this process (a builtin's name is refused; another registered
    row of the same name only with `replace`). Returns it, so it can decorate a row."""
    if provider.name in _builtin():
        raise ModelSpecError(f"provider {provider.name!r} is builtin and cannot be replaced")
    with _lock:
        if provider.name in _registered and not replace:
            raise ModelSpecError(f"provider {provider.name!r} is already registered")
        _registered[provider.name] = provider
    return provider


def unregister_provider(name: str) -> None:
    """Forget a provider added with `register_provider` (tests)."""
    with _lock:
        _registered.pop(name, None)


def provider_names() -> tuple[str, ...]:
    """Builtin providers, then registered and plugin ones (sorted), without importing any."""
    builtin = tuple(_builtin())
    with _lock:
        extra = set(_registered)
    extra |= set(plugins.plugins(plugins.MODELS))
    return (*builtin, *sorted(extra - set(builtin)))


def get_provider(name: str) -> Provider | None:
    """The row of provider `name` (a plugin's entry point is loaded now), or None."""
    builtin = _builtin().get(name)
    if builtin is not None:
        return builtin
    with _lock:
        registered = _registered.get(name)
    if registered is not None:
        return registered
    loaded = plugins.load(plugins.MODELS, name)
    if loaded is None:
        return None
    if isinstance(loaded, Provider):
        if loaded.name != name:
            raise ModelSpecError(
                f"the {plugins.MODELS} entry point {name!r} holds provider {loaded.name!r}"
            )
        return loaded
    if not callable(loaded):
        raise ModelSpecError(
            f"the {plugins.MODELS} entry point {name!r} is not a Provider or a model factory "
            f"(got {type(loaded).__name__})"
        )
    return Provider(name=name, factory=loaded, options=None, about="plugin provider")


def default_limits() -> dict[str, int | None]:
    """The default in-flight limit of every builtin and registered provider."""
    with _lock:
        registered = list(_registered.values())
    return {p.name: p.max_connections for p in (*_builtin().values(), *registered)}


_OPENAI_OPTIONS = {
    "base_url": "endpoint URL (openai: OPENAI_BASE_URL; openai-api: CONFIDE_OPENAI_API_BASE_URL)",
    "api_key": "API key (openai: OPENAI_API_KEY; openai-api: CONFIDE_OPENAI_API_KEY)",
    "timeout_s": "seconds one request may take (default 600)",
    "structured_output": "force json_schema, json_object or text instead of negotiating",
    "max_tokens": "reply token cap for calls that set none",
    "tool_calls": "force native or text tool calls instead of probing",
}
_NEGOTIATED = ("json_schema", "json_object", "text")

BUILTIN: tuple[Provider, ...] = (
    Provider(
        name="openai",
        factory="confide.llm.providers.openai_api:make_openai",
        about="the OpenAI API (key: OPENAI_API_KEY)",
        max_connections=16,
        structured_output=("json_schema",),
        options=_OPENAI_OPTIONS,
    ),
    Provider(
        name="openai-api",
        factory="confide.llm.providers.openai_api:make_openai_compatible",
        about="any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server, ...); "
        "presets for known services",
        max_connections=8,
        structured_output=_NEGOTIATED,
        options={
            **_OPENAI_OPTIONS,
            "preset": "a known service's settings: "
            "deepseek, together, fireworks, openrouter, vllm, ollama",
        },
    ),
    Provider(
        name="anthropic",
        factory="confide.llm.providers.anthropic_api:make_anthropic",
        about="the Anthropic Messages API (key: ANTHROPIC_API_KEY)",
        max_connections=16,
        structured_output=("tool",),
        options={
            "base_url": "endpoint URL (default ANTHROPIC_BASE_URL or Anthropic's)",
            "api_key": "API key (default ANTHROPIC_API_KEY)",
            "timeout_s": "seconds one request may take (default 600)",
            "max_tokens": "reply token cap for calls that set none (default 4096)",
            "prompt_cache": "place cache_control breakpoints (default true)",
        },
        extra="anthropic",
        requires=("anthropic",),
    ),
    Provider(
        name="google",
        factory="confide.llm.providers.google_api:make_google",
        about="the Gemini API (key: GEMINI_API_KEY or GOOGLE_API_KEY)",
        max_connections=16,
        structured_output=("response_schema",),
        options={
            "base_url": "endpoint URL (default GOOGLE_GEMINI_BASE_URL or Google's)",
            "api_key": "API key (default GEMINI_API_KEY, then GOOGLE_API_KEY)",
            "timeout_s": "seconds one request may take (default 600)",
            "max_tokens": "reply token cap for calls that set none",
        },
        extra="google",
        requires=("google.genai",),
    ),
    Provider(
        name="mock",
        factory="confide.llm.providers.mock_registry:make_mock",
        about="scripted stand-ins for tests (never a real model)",
        options=None,
        backoff=False,
    ),
    Provider(
        name="local",
        factory="confide.llm.providers.local:make_local_model",
        about="a small model embedded through llama.cpp",
        max_connections=1,
        structured_output=("grammar",),
        options={
            "n_ctx": "context length (default 8192)",
            "n_threads": "threads (default the cores not busy with other work)",
            "prefix_cache_mb": "prefix-state RAM cache in MB (default 1024; 0: off)",
            "dequantize": "run the weights as F16, faster on CPU (default true)",
        },
        extra="local",
    ),
    Provider(
        name="replay",
        factory="confide.llm.providers.replay:make_replay",
        about="answers from the model calls of a recorded trace",
        options={"seat": "keep only this seat's calls", "strict": "no order fallback"},
        backoff=False,
    ),
)
_BY_NAME = {p.name: p for p in BUILTIN}
