"""The chat-model layer: one async protocol, providers named `provider/model` (one
registry row each, `confide.llm.registry`: openai, openai-api, anthropic, google, mock,
local, replay, and plugins), wrappers (cache, retry, concurrency limit, usage and
cost accounting, recording) and a structured-output helper with a repair loop.

    model = get_model("mock/echo")
    reply = await model.generate([ChatMessage(role="user", content="hi")],
                                 config=GenerateConfig())
"""

from confide.llm.cache import CachedModel, ResponseCache
from confide.llm.errors import ModelCrashError, ModelError, ModelSpecError
from confide.llm.factory import build_provider, get_model
from confide.llm.limits import LimitedModel, ProviderLimiter
from confide.llm.pricing import ModelPrice, PriceTable, load_price_table
from confide.llm.providers.faults import FaultPlan
from confide.llm.providers.mock import MockModel
from confide.llm.providers.mock_registry import mock_names, register_mock, unregister_mock
from confide.llm.recorder import ModelCallRecord, RecordingModel, with_recorder
from confide.llm.registry import Provider, register_provider, unregister_provider
from confide.llm.retry import RetryingModel, RetryPolicy
from confide.llm.spec import ModelSpec, parse_spec
from confide.llm.structured import (
    StructuredAttempt,
    StructuredResult,
    generate_structured,
    parse_reply,
)
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig, Usage
from confide.llm.usage import MeteredModel, ModelUsage, UsageMeter

__all__ = [
    "CachedModel",
    "ChatMessage",
    "ChatModel",
    "Completion",
    "FaultPlan",
    "GenerateConfig",
    "LimitedModel",
    "MeteredModel",
    "MockModel",
    "ModelCallRecord",
    "ModelCrashError",
    "ModelError",
    "ModelPrice",
    "ModelSpec",
    "ModelSpecError",
    "ModelUsage",
    "PriceTable",
    "Provider",
    "ProviderLimiter",
    "RecordingModel",
    "ResponseCache",
    "RetryPolicy",
    "RetryingModel",
    "StructuredAttempt",
    "StructuredResult",
    "Usage",
    "UsageMeter",
    "build_provider",
    "generate_structured",
    "get_model",
    "load_price_table",
    "mock_names",
    "parse_reply",
    "parse_spec",
    "register_mock",
    "register_provider",
    "unregister_mock",
    "unregister_provider",
    "with_recorder",
]
