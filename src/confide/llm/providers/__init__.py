"""Chat-model providers, one `Provider` row each (`confide.llm.registry`). Factories are
named lazily, so listing providers imports no SDK and an optional provider's missing
extra only matters when it is used."""

from __future__ import annotations

from confide.llm.registry import Provider

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
            "n_threads": "threads (default every core)",
            "prefix_cache_mb": "prefix-state RAM cache in MB (default 1024; 0: off)",
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
