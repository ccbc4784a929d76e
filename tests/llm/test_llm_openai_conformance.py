"""One episode of each benchmark over real HTTP: against local
fakes of vLLM and Ollama's OpenAI endpoint, and against llama-cpp-python's own server
with the embedded SmolLM2 (marked `local_model`). Each episode must reach a recorded
outcome: status ok (a small model's unusable replies are recorded as invalid output, not
as an error), no transient transport error, usage counted from the server's replies, and
the negotiated structured-output mode in the trace header."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _openai_servers import EPISODES, FakeServer, LlamaServer, run_one, transport_errors

from confide.core.trace import Trace
from confide.llm import ChatMessage, GenerateConfig, ModelError, get_model
from confide.runner import RunSummary

MODEL = "openai-api/smollm2"
BENCHMARKS = sorted(EPISODES)
SLOW_CPU_TIMEOUT_S = 900  # SmolLM2 on 2 busy cores: minutes per call at worst
REPLY_CAP = 256  # the judge sets no budget; greedy SmolLM2 can fill 8k tokens in a string


def check_outcome(summary: RunSummary, trace: Trace, mode: str) -> None:
    """The episode reached a recorded outcome over HTTP, with usage from the replies."""
    assert trace.footer is not None and trace.footer.status == "ok", trace.footer
    assert summary.failed == []
    assert transport_errors(trace) == []
    assert trace.header.config["structured_output"] == {MODEL: mode}
    calls = [c for c in trace.model_calls() if c.completion is not None]
    assert calls
    traced = sum(c.completion["usage"]["prompt_tokens"] for c in calls if c.completion)
    metered = summary.usage[MODEL]
    assert traced > 0 and metered["prompt_tokens"] >= traced  # (+ the negotiation probe)


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    server = FakeServer(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("benchmark", BENCHMARKS)
@pytest.mark.parametrize(
    ("fake", "mode"), [("vllm", "json_schema"), ("ollama", "json_object")], indirect=["fake"]
)
def test_fake_server_episode(benchmark: str, fake: FakeServer, mode: str, tmp_path: Path) -> None:
    summary, trace = run_one(benchmark, MODEL, tmp_path / "run", fake.base_url)
    check_outcome(summary, trace, mode)
    formats = [(b.get("response_format") or {}).get("type") for b in fake.requests]
    if mode == "json_object":  # one refused json_schema, then JSON mode for good
        assert formats[:2] == ["json_schema", "json_object"]
        assert set(formats[2:]) <= {"json_object", None}
    else:
        assert set(formats) <= {"json_schema", None}


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server = LlamaServer(tmp_path_factory.mktemp("llama-server") / "server.log")
    yield server
    server.stop()


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_real_llama_cpp_server_episode(
    benchmark: str, llama_server: LlamaServer, tmp_path: Path
) -> None:
    before, start = llama_server.chat_requests(), time.monotonic()
    summary, trace = run_one(
        benchmark,
        MODEL,
        tmp_path / "run",
        llama_server.base_url,
        timeout_s=SLOW_CPU_TIMEOUT_S,
        max_tokens=REPLY_CAP,
    )
    check_outcome(summary, trace, "json_object")
    sent = llama_server.chat_requests() - before
    calls = len(trace.model_calls())
    # every traced call reached the server; the rest are the one-off negotiation requests
    # (and, for Incognita's tool-holding agent, the one function-calling probe)
    assert calls <= sent <= calls + 2 + (benchmark == "incognita")
    print(f"{benchmark}: {sent} server requests, {time.monotonic() - start:.0f} s")


@pytest.mark.local_model
async def test_real_server_refusal_is_sent_once(llama_server: LlamaServer) -> None:
    """Llama.cpp answers `json_schema` with HTTP 500 and a validation
    body; forced, that request is sent once (it was sent 5 times), as a capability error."""
    model = get_model(MODEL, base_url=llama_server.base_url, structured_output="json_schema")
    before = llama_server.chat_requests()
    config = GenerateConfig(max_tokens=4, response_schema={"type": "object"})
    with pytest.raises(ModelError) as caught:
        await model.generate([ChatMessage(role="user", content="hi")], config=config)
    assert caught.value.status_code == 500 and caught.value.attempts == 1
    assert caught.value.error_class == "capability"
    assert llama_server.chat_requests() - before == 1


@pytest.mark.local_model
@pytest.mark.slow
def test_real_server_incognita_agent_uses_tools_or_records_the_fallback(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    """The direct-condition agent over llama-cpp-python's server offers
    its tools with every call; each completion records whether they went natively or by
    the text fallback (the `chatml` server ignores `tools` under tool choice "auto", so
    the probe finds no call and the fallback is taken and recorded)."""
    summary, trace = run_one(
        "incognita", MODEL, tmp_path / "run", llama_server.base_url,
        timeout_s=SLOW_CPU_TIMEOUT_S, max_tokens=REPLY_CAP,
    )
    check_outcome(summary, trace, "json_object")
    agent = [c for c in trace.model_calls() if c.seat == "AGENT" and c.completion is not None]
    assert agent
    modes = {c.completion["tool_mode"] for c in agent if c.completion}
    assert len(modes) == 1 and modes <= {"native", "text"}  # learned once, then kept
    assert all(len(call.config["tools"]) == 15 for call in agent)
    print(f"incognita agent tool mode over llama.cpp: {modes.pop()}")
