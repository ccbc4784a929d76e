"""Connections that scale: per-model `max_connections` (option, YAML scope, CLI flag),
recorded in the trace header; the limit halves on a 429 and climbs back; rate limits
are retried for minutes within the policy's budget, every retry counted; presets for
OpenAI-compatible services, checked before anything runs."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from _openai_servers import FakeServer, run_one

from confide.cli.run import _model_options
from confide.errors import ConfideError
from confide.llm import (
    ChatMessage,
    Completion,
    GenerateConfig,
    LimitedModel,
    ModelError,
    ModelSpecError,
    ProviderLimiter,
    RetryingModel,
    RetryPolicy,
    UsageMeter,
    get_model,
)
from confide.llm.presets import PRESETS
from confide.runner import build_experiment
from confide.runner.preflight import preflight

HI = [ChatMessage(role="user", content="hi")]


class Flaky:
    """Answers after `delay_s`; the first `limited` calls are refused with a 429."""

    def __init__(self, limited: int = 0, retry_after_s: float | None = None) -> None:
        self.name = "acme/flaky"
        self.limited = limited
        self.retry_after_s = retry_after_s
        self.calls = self.active = self.peak = 0

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(0.001)
            if self.calls <= self.limited:
                raise ModelError("HTTP 429: slow down", model=self.name, kind="rate_limit",
                                 retry_after_s=self.retry_after_s)
            return Completion(model=self.name, text="ok")
        finally:
            self.active -= 1


async def test_a_429_halves_the_limit_then_it_recovers() -> None:
    limiter = ProviderLimiter({"pool": 8})
    inner = Flaky(limited=1)
    model = LimitedModel(inner, limiter, "pool")
    with pytest.raises(ModelError):
        await model.generate(HI, config=GenerateConfig())
    inner.peak = 0
    await asyncio.gather(*(model.generate(HI, config=GenerateConfig()) for _ in range(16)))
    assert 4 <= inner.peak <= 5  # halved from 8, then +1 per round of 4 successes
    for _ in range(10):
        await asyncio.gather(*(model.generate(HI, config=GenerateConfig()) for _ in range(8)))
    inner.peak = 0
    await asyncio.gather(*(model.generate(HI, config=GenerateConfig()) for _ in range(32)))
    assert inner.peak == 8  # recovered to the ceiling, never above


async def test_rate_limits_are_waited_out_within_the_budget() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    meter = UsageMeter()
    policy = RetryPolicy(jitter=0.0, max_delay_s=20.0)  # backoff below the Retry-After
    patient = RetryingModel(Flaky(limited=12, retry_after_s=30.0), policy,
                            sleep=sleep, meter=meter)
    assert (await patient.generate(HI, config=GenerateConfig())).text == "ok"
    assert waits == [30.0] * 12  # past max_attempts=5: minutes of Retry-After honoured
    assert meter.total().retries == 12
    waits.clear()
    hopeless = RetryingModel(Flaky(limited=100, retry_after_s=30.0), policy, sleep=sleep)
    with pytest.raises(ModelError) as caught:
        await hopeless.generate(HI, config=GenerateConfig())
    assert sum(waits) == 600.0 and caught.value.attempts == 21  # the 600 s budget, spent
    other = RetryingModel(Flaky(limited=100), RetryPolicy(base_delay_s=0.0), sleep=sleep)
    with pytest.raises(ModelError) as caught:
        await other.generate(HI, config=GenerateConfig())
    assert caught.value.attempts == 5  # no backoff, no budget: max_attempts


def test_cli_flags_become_model_options() -> None:
    options = _model_options(
        ["openai-api/deepseek-chat=preset:deepseek,max_tokens:512"],
        ["openai-api/deepseek-chat=32", "anthropic/claude-sonnet-4-6=8"],
    )
    assert options == {
        "openai-api/deepseek-chat": {"preset": "deepseek", "max_tokens": 512,
                                     "max_connections": 32},
        "anthropic/claude-sonnet-4-6": {"max_connections": 8},
    }
    with pytest.raises(ConfideError, match="expected KEY:VALUE"):
        _model_options(["openai-api/x=preset"], None)


def test_max_connections_is_in_the_trace_header(tmp_path: Path) -> None:
    server = FakeServer("vllm")
    try:
        _, trace = run_one("incognita", "openai-api/fake", tmp_path / "run", server.base_url,
                           max_connections=3)
    finally:
        server.close()
    assert trace.header.config["max_connections"] == {"openai-api/fake": 3}


def _experiment(model_options: dict[str, object], tmp_path: Path) -> object:
    return build_experiment({
        "benchmark": "incognita", "limit": 1, "output_dir": str(tmp_path / "run"),
        "conditions": ["direct"], "lineups": ["openai-api/deepseek-chat"],
        "roles": {"customer": "mock/json"}, "model_options": model_options,
    }, check=False)


def test_preflight_checks_presets_and_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    for options, problem in (
        ({"openai-api/deepseek-chat": {"preset": "deepseak"}}, "unknown preset 'deepseak'"),
        ({"openai-api/deepseek-chat": {"preset": "deepseek"}}, "set DEEPSEEK_API_KEY"),
        ({"openai-api/deepseek-chat": {"base_url": "http://127.0.0.1:9/v1",
                                       "max_connections": "64"}}, "integer >= 1, got '64'"),
        ({"openai-api": {"base_url": "http://127.0.0.1:9/v1", "limiter": 16}},
         "limiter must be a ProviderLimiter"),
    ):
        with pytest.raises(ConfideError, match=problem):
            preflight(_experiment(options, tmp_path))  # type: ignore[arg-type]


def test_a_preset_fills_what_is_left_open(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-test-0123456789abcdef")
    model = get_model("openai-api/deepseek-reasoner", preset="deepseek")
    provider = model.inner.inner.inner  # metered > retry > limit > provider
    assert provider.base_url == PRESETS["deepseek"].base_url
    assert provider.structured_output == "json_object"
    local = get_model("openai-api/llama3", preset="ollama", base_url="http://10.0.0.2:11434/v1")
    assert local.inner.inner.inner.base_url == "http://10.0.0.2:11434/v1"  # the option wins
    with pytest.raises(ModelSpecError, match="known: deepseek, together, fireworks"):
        get_model("openai-api/x", preset="nope")


def test_ollama_preset_sends_json_mode_first(tmp_path: Path) -> None:
    server = FakeServer("ollama")
    try:
        _, trace = run_one("incognita", "openai-api/llama3", tmp_path / "run",
                                 server.base_url, preset="ollama")
    finally:
        server.close()
    assert trace.footer is not None and trace.footer.status == "ok"
    formats = {(b.get("response_format") or {}).get("type") for b in server.requests}
    assert "json_schema" not in formats  # no refused negotiation step


def test_an_unpriced_model_is_a_preflight_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    experiment = build_experiment({
        "benchmark": "incognita", "limit": 1, "output_dir": str(tmp_path / "run"),
        "conditions": ["direct"], "lineups": ["openai-api/unpriced-model"],
        "roles": {"customer": "openai/gpt-4.1", "judge": "openai/gpt-4.1"},
        "model_options": {"openai-api": {"base_url": "http://127.0.0.1:9/v1"},
                          "openai": {"api_key": "sk-test-0123456789abcdefghij"}},
    }, check=False)
    with caplog.at_level("WARNING", logger="confide"):
        preflight(experiment)
    warned = [r.getMessage() for r in caplog.records if "no price" in r.getMessage()]
    assert len(warned) == 1 and "openai-api/unpriced-model" in warned[0]
    assert "never as $0" in warned[0]
