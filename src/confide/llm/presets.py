"""Recipes for OpenAI-compatible services: `openai-api/<model>` with the model option
`preset: <name>` takes the service's base URL and key variable and its known capability
differences from here, so an experiment names a service instead of repeating them:

    model_options:
      openai-api/deepseek-reasoner: {preset: deepseek}
    # or: confide run ... --model-options openai-api/deepseek-reasoner=preset:deepseek

A preset fills only what the run leaves open: an explicit `base_url`, `api_key`,
`structured_output` or `tool_calls` option still wins. Its key variable is required for
hosted services (preflight names it when it is unset) and optional for self-hosted
servers. The facts, as each service documents its OpenAI-compatible API:

- deepseek: JSON output is `response_format: {"type": "json_object"}` (no JSON schema
  mode), so the schema goes in JSON mode; the reasoner model returns its reasoning in
  `message.reasoning_content`, which confide neither shows as the reply nor sends back
  (the API refuses it in input), and counts in
  `completion_tokens_details.reasoning_tokens`.
- together, fireworks, openrouter: `json_schema` response formats and function calling
  for the models that support them, negotiated per model as for any endpoint; OpenRouter
  returns reasoning in `message.reasoning` (ignored like DeepSeek's).
- vllm: `json_schema` (guided decoding) and, when the server runs with a tool parser,
  native tool calls; reasoning parsers put reasoning in `reasoning_content`.
- ollama: JSON mode (`json_object`) for structured output and function calling for
  models with tool support, at its default local address.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from confide.llm.errors import ModelSpecError
from confide.llm.structured_output import StructuredOutput
from confide.llm.types import ToolMode


class Preset(NamedTuple):
    """One service's settings for `openai-api/`."""

    base_url: str
    key_variable: str
    key_required: bool
    structured_output: StructuredOutput | None = None
    tool_calls: ToolMode | None = None
    reasoning_field: str | None = None
    """Where the service returns reasoning text (never taken as the reply)."""


PRESETS: Mapping[str, Preset] = {
    "deepseek": Preset(
        "https://api.deepseek.com/v1",
        "DEEPSEEK_API_KEY",
        True,
        structured_output="json_object",
        reasoning_field="reasoning_content",
    ),
    "together": Preset("https://api.together.xyz/v1", "TOGETHER_API_KEY", True),
    "fireworks": Preset("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY", True),
    "openrouter": Preset(
        "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True, reasoning_field="reasoning"
    ),
    "vllm": Preset(
        "http://127.0.0.1:8000/v1", "VLLM_API_KEY", False, reasoning_field="reasoning_content"
    ),
    "ollama": Preset(
        "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", False, structured_output="json_object"
    ),
}


def get_preset(name: object, spec: str) -> Preset:
    """The preset `name`, or one error naming the known ones."""
    if not isinstance(name, str) or name not in PRESETS:
        raise ModelSpecError(f"{spec}: unknown preset {name!r} (known: {', '.join(PRESETS)})")
    return PRESETS[name]
