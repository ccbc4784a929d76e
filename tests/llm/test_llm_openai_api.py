"""The openai-api provider against a real HTTP server on 127.0.0.1: retries on 429 (with
Retry-After), 500 and timeouts, malformed bodies, final errors, usage and cost, and API
keys never leaking into errors or reprs."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from confide.llm import (
    ChatMessage,
    GenerateConfig,
    ModelError,
    RetryPolicy,
    get_model,
)
from confide.llm.providers.openai_api import parse_retry_after

KEY = "sk-test-SECRETKEY-0123456789abcdef"
HI = [ChatMessage(role="user", content="hello")]


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response; `delay_s` is waited before answering. In `body`,
    the text {auth} is replaced by the request's Authorization header (to test that an
    echoed key is redacted)."""

    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def ok(text: str, prompt_tokens: int = 11, completion_tokens: int = 5) -> Reply:
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "served-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Reply(body=json.dumps(body), headers={"Content-Type": "application/json"})


def err(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "test_error", "code": None}})
    return Reply(status, body, {"Content-Type": "application/json", **(headers or {})})


class FakeServer:
    """POST /v1/chat/completions answered from a queue; records each request."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with server._lock:
                    server.requests.append(
                        ({k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
                    )
                    reply = server.replies.pop(0) if server.replies else err(500, "no reply left")
                if self.path != "/v1/chat/completions":
                    reply = err(404, f"no route {self.path}")
                time.sleep(reply.delay_s)
                payload = reply.body.replace("{auth}", self.headers.get("Authorization", ""))
                data = payload.encode()
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[FakeServer] = []

    def start(*replies: Reply) -> FakeServer:
        servers.append(FakeServer(list(replies)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


class Sleeps:
    """An injected sleep that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def model_for(server: FakeServer, spec: str = "openai-api/tiny", **options: Any) -> Any:
    sleeps = Sleeps()
    options.setdefault("retry", RetryPolicy(max_attempts=3, base_delay_s=0.5, jitter=0.0))
    options.setdefault("timeout_s", 5.0)
    model = get_model(spec, base_url=server.base_url, api_key=KEY, sleep=sleeps, **options)
    return model, sleeps


def provider_of(model: Any) -> Any:
    """The bare provider under the wrappers."""
    while hasattr(model, "inner"):
        model = model.inner
    return model


async def test_success_sends_request_and_counts_usage(serve: Any) -> None:
    server = serve(ok("hi there", prompt_tokens=12, completion_tokens=3))
    model, sleeps = model_for(server)
    config = GenerateConfig(temperature=0.3, max_tokens=20, seed=7, stop=("END",))
    reply = await model.generate(HI, config=config)
    assert reply.text == "hi there"
    assert reply.model == "openai-api/tiny"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 3)
    assert reply.usage.cost_usd is None  # no price for a custom endpoint: unknown, not 0
    headers, body = server.requests[0]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["x-stainless-retry-count"] == "0"
    assert body == {
        "model": "tiny",
        "messages": [{"role": "user", "content": "hello"}],
        "temperature": 0.3,
        "max_tokens": 20,
        "seed": 7,
        "stop": ["END"],
    }
    total = model.meter.total()
    assert (total.calls, total.prompt_tokens, total.completion_tokens) == (1, 12, 3)
    assert total.unknown_cost_calls == 1 and total.cost_usd == 0.0
    assert sleeps.waits == []


async def test_429_with_retry_after_is_honoured(serve: Any) -> None:
    server = serve(err(429, "slow down", {"Retry-After": "7"}), ok("done"))
    model, sleeps = model_for(server)
    reply = await model.generate(HI, config=GenerateConfig())
    assert reply.text == "done"
    assert len(server.requests) == 2
    assert sleeps.waits == [7.0]  # Retry-After (7 s) beats the 0.5 s backoff
    assert model.meter.total().retries == 1
    assert model.meter.total().calls == 1


async def test_500_then_success_backs_off(serve: Any) -> None:
    server = serve(err(500, "boom"), err(502, "bad gateway"), ok("fine", 4, 2))
    model, sleeps = model_for(server)
    reply = await model.generate(HI, config=GenerateConfig())
    assert reply.text == "fine"
    assert len(server.requests) == 3
    assert sleeps.waits == [0.5, 1.0]  # base * 2**(k-1), jitter off
    total = model.meter.total()
    assert (total.calls, total.failed_calls, total.retries) == (1, 0, 2)
    assert (total.prompt_tokens, total.completion_tokens) == (4, 2)


async def test_timeouts_retry_then_fail_with_timeout_error(serve: Any) -> None:
    server = serve(ok("late", 1, 1), ok("late again", 1, 1))
    server.replies = [Reply(r.status, r.body, r.headers, delay_s=1.0) for r in server.replies]
    retry = RetryPolicy(max_attempts=2, base_delay_s=0.0)
    model, _ = model_for(server, retry=retry, timeout_s=0.2)
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    error = caught.value
    assert error.kind == "timeout" and error.transient and error.attempts == 2
    assert "timed out" in str(error) and "gave up after 2 attempts" in str(error)
    assert len(server.requests) == 2
    assert model.meter.total().failed_calls == 1


async def test_timeout_then_success(serve: Any) -> None:
    server = serve(Reply(200, ok("slow").body, ok("slow").headers, delay_s=1.0), ok("quick"))
    model, _ = model_for(server, timeout_s=0.2)
    reply = await model.generate(HI, config=GenerateConfig())
    assert reply.text == "quick"
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "body",
    ["not json at all{", '{"choices": []}', '{"unexpected": 1}', '{"choices": [{"x": 1}]}'],
)
async def test_malformed_body_is_retried_then_reported(serve: Any, body: str) -> None:
    bad = Reply(200, body, {"Content-Type": "application/json"})
    server = serve(bad, bad, bad)
    model, sleeps = model_for(server)
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert caught.value.kind == "bad_response" and caught.value.attempts == 3
    assert "malformed response body" in str(caught.value)
    assert len(server.requests) == 3 and len(sleeps.waits) == 2


async def test_malformed_body_then_success(serve: Any) -> None:
    server = serve(Reply(200, "{oops", {"Content-Type": "application/json"}), ok("good"))
    model, _ = model_for(server)
    assert (await model.generate(HI, config=GenerateConfig())).text == "good"


async def test_client_error_is_not_retried(serve: Any) -> None:
    server = serve(err(400, "bad parameter 'seed'"), ok("never"))
    model, sleeps = model_for(server)
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert caught.value.kind == "bad_request" and not caught.value.transient
    assert caught.value.status_code == 400 and caught.value.attempts == 1
    assert "bad parameter 'seed'" in str(caught.value)
    assert len(server.requests) == 1 and sleeps.waits == []


async def test_keys_never_reach_errors_or_reprs(serve: Any) -> None:
    echo = "rejected credentials {auth} (key ends " + KEY[-10:] + ")"
    server = serve(err(401, echo), err(500, echo), err(500, echo), err(500, echo))
    model, _ = model_for(server)
    for _ in range(2):
        with pytest.raises(ModelError) as caught:
            await model.generate(HI, config=GenerateConfig())
        shown = " ".join([str(caught.value), repr(caught.value), caught.value.message])
        assert "rejected credentials" in shown
        assert KEY not in shown and KEY[:12] not in shown and KEY[-10:] not in shown
        chained: BaseException | None = caught.value
        while chained is not None:  # nothing reachable from the error holds the key
            assert KEY not in str(chained) and KEY not in repr(chained)
            chained = chained.__cause__ or chained.__context__
        assert caught.value.__context__ is None
    assert KEY not in repr(model) and KEY not in repr(provider_of(model).__dict__)


async def test_openai_provider_prices_and_reasoning_params(serve: Any) -> None:
    server = serve(ok("a", 1_000_000, 200_000), ok("b", 2000, 1000))
    mini, _ = model_for(server, spec="openai/gpt-4o-mini")
    reply = await mini.generate(HI, config=GenerateConfig(max_tokens=50))
    assert reply.usage.cost_usd == pytest.approx(0.15 + 0.2 * 0.60)  # per-million prices
    assert server.requests[0][1]["max_completion_tokens"] == 50
    assert server.requests[0][1]["temperature"] == 0.0
    reasoning, _ = model_for(server, spec="openai/gpt-5-mini", meter=mini.meter)
    reply = await reasoning.generate(HI, config=GenerateConfig())
    assert "temperature" not in server.requests[1][1]
    assert reply.usage.cost_usd == pytest.approx((2000 * 0.25 + 1000 * 2.0) / 1e6)
    assert mini.meter.total().cost_usd == pytest.approx(0.27 + 0.0025)
    assert set(mini.meter.snapshot()) == {"openai/gpt-4o-mini", "openai/gpt-5-mini"}


SCHEMA = {"title": "Answer", "type": "object", "properties": {"x": {"type": "integer"}}}
LLAMA_CPP_REFUSAL = (
    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]"
)


async def test_forced_structured_output_modes(serve: Any) -> None:
    server = serve(ok("{}"), ok("{}"), ok("{}"))
    config = GenerateConfig(response_schema=SCHEMA)
    for mode in ("json_schema", "json_object", "text"):
        model, _ = model_for(server, structured_output=mode)
        await model.generate(HI, config=config)
        assert provider_of(model).structured_output == mode
    formats = [body.get("response_format") for _, body in server.requests]
    assert formats == [
        {
            "type": "json_schema",
            "json_schema": {"name": "Answer", "schema": SCHEMA, "strict": False},
        },
        {"type": "json_object", "schema": SCHEMA},
        None,
    ]
    prompts = [body["messages"][-1]["content"] for _, body in server.requests]
    assert prompts[:2] == ["hello", "hello"]
    assert prompts[2].startswith("hello\n\nReply with one JSON object")
    assert prompts[2].endswith(json.dumps(SCHEMA))


async def test_negotiation_steps_down_once_per_model(serve: Any) -> None:
    server = serve(err(500, LLAMA_CPP_REFUSAL), ok("{}"), ok("{}"), ok("plain"))
    model, sleeps = model_for(server)
    config = GenerateConfig(response_schema=SCHEMA)
    assert provider_of(model).structured_output is None
    await model.generate(HI, config=config)
    await model.generate(HI, config=config)
    await model.generate(HI, config=GenerateConfig())  # no schema: no response format
    types = [body.get("response_format", {}).get("type") for _, body in server.requests]
    assert types == ["json_schema", "json_object", "json_object", None]
    assert provider_of(model).structured_output == "json_object"
    assert sleeps.waits == [] and model.meter.total().retries == 0


async def test_negotiation_falls_back_to_schema_in_prompt(serve: Any) -> None:
    server = serve(
        err(400, "response_format type json_schema is not supported"),
        err(422, "unsupported response_format: json_object"),
        ok('{"x": 1}'),
    )
    model, _ = model_for(server)
    mode = await provider_of(model).negotiate()
    assert mode == "text" and len(server.requests) == 3
    assert "response_format" not in server.requests[2][1]
    assert '"required": ["ok"]' in server.requests[2][1]["messages"][-1]["content"]


async def test_forced_mode_refused_is_a_capability_error(serve: Any) -> None:
    server = serve(err(500, LLAMA_CPP_REFUSAL), ok("never"))
    model, sleeps = model_for(server, structured_output="json_schema")
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig(response_schema=SCHEMA))
    assert caught.value.kind == "capability" and caught.value.error_class == "capability"
    assert len(server.requests) == 1 and sleeps.waits == []
    assert "(capability error)" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "message", "error_class"),
    [
        (500, "1 validation error for Request: field required", "validation"),
        (400, "This model's maximum context length is 2048 tokens", "validation"),
        (422, "Unprocessable Entity: messages", "validation"),
    ],
)
async def test_validation_errors_are_sent_once(
    serve: Any, status: int, message: str, error_class: str
) -> None:
    server = serve(err(status, message), ok("never"))
    model, sleeps = model_for(server)
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig(response_schema=SCHEMA))
    assert caught.value.error_class == error_class and not caught.value.transient
    assert len(server.requests) == 1 and sleeps.waits == []
    assert provider_of(model).structured_output is None  # not mistaken for a capability


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("This model's maximum context length is 8192 tokens. However, you requested 8296 "
         "tokens (8296 in the messages, None in the completion).", "context_length"),
        ("the request exceeds the available context size, try increasing it",
         "context_length"),
        ("1 validation error for Request: field required", "bad_request"),
    ],
)
async def test_a_conversation_beyond_the_context_is_its_own_kind(
    serve: Any, message: str, kind: str
) -> None:
    server = serve(err(400, message), ok("never"))
    model, sleeps = model_for(server)
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert caught.value.kind == kind and caught.value.error_class == "validation"
    assert len(server.requests) == 1 and sleeps.waits == []


async def test_transient_errors_during_negotiation_are_retried(serve: Any) -> None:
    server = serve(err(503, "loading model"), ok("{}"))
    model, sleeps = model_for(server)
    await model.generate(HI, config=GenerateConfig(response_schema=SCHEMA))
    assert sleeps.waits == [0.5] and len(server.requests) == 2
    assert provider_of(model).structured_output == "json_schema"


async def test_unknown_structured_output_is_rejected(serve: Any) -> None:
    from confide.llm import ModelSpecError

    with pytest.raises(ModelSpecError, match="structured_output must be one of"):
        model_for(serve(), structured_output="grammar")


async def test_short_key_is_not_redacted_and_warned_once(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    text = "expected 'x' in the text"
    server = serve(err(400, text), err(400, text))
    with caplog.at_level("WARNING", logger="confide"):
        for _ in range(2):
            model = get_model("openai-api/tiny", base_url=server.base_url, api_key="x")
            with pytest.raises(ModelError) as caught:
                await model.generate(HI, config=GenerateConfig())
            assert caught.value.message == f"HTTP 400: {text}"
    warnings = [r.getMessage() for r in caplog.records if "API key" in r.getMessage()]
    assert len(warnings) == 1 and "1 character(s) long" in warnings[0]


async def test_connection_refused_is_transient_connection_error() -> None:
    model = get_model(
        "openai-api/x",
        base_url="http://127.0.0.1:9/v1",
        api_key=KEY,
        retry=RetryPolicy(max_attempts=2, base_delay_s=0.0),
    )
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert caught.value.kind == "connection" and caught.value.attempts == 2
    assert KEY not in str(caught.value)


async def test_url_credentials_never_reach_errors() -> None:
    model = get_model(
        "openai-api/x",
        base_url="http://user:pw@127.0.0.1:9/v1",
        retry=RetryPolicy(max_attempts=1),
    )
    with pytest.raises(ModelError) as caught:
        await model.generate(HI, config=GenerateConfig())
    assert "http://***@127.0.0.1:9/v1" in str(caught.value)
    assert "pw" not in str(caught.value).replace("http", "")


def test_configuration_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONFIDE_OPENAI_API_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="CONFIDE_OPENAI_API_BASE_URL") as caught:
        get_model("openai-api/x")
    assert caught.value.kind == "config" and not caught.value.transient
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        get_model("openai/gpt-5-mini")
    monkeypatch.setenv("CONFIDE_OPENAI_API_BASE_URL", "http://user:pw@127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    endpoint = provider_of(get_model("openai-api/x"))
    assert endpoint.base_url == "http://user:pw@127.0.0.1:1/v1"
    assert "pw" not in repr(endpoint)
    assert endpoint._api_key.reveal() == "EMPTY"  # the OpenAI key is not sent elsewhere
    assert provider_of(get_model("openai/gpt-5"))._api_key.reveal() == KEY


async def test_default_timeout_outlasts_a_long_prompt_on_a_cpu_server() -> None:
    """Seen against llama.cpp on two busy cores: one 1774-token CalBench prompt
    took 106 s, so a 60 s default timed out five times (the server kept computing each
    abandoned request) and the episode ended in error. The default is the SDK's 600 s,
    and it is what the client is built with."""
    endpoint = provider_of(get_model("openai-api/x", base_url="http://127.0.0.1:1/v1"))
    assert endpoint.timeout_s == 600.0
    assert endpoint._client().timeout == 600.0
    fast = provider_of(get_model("openai-api/x", base_url="http://127.0.0.1:1/v1", timeout_s=5))
    assert fast.timeout_s == 5.0 and fast._client().timeout == 5.0


def test_unknown_option_is_rejected() -> None:
    from confide.llm import ModelSpecError

    with pytest.raises(ModelSpecError, match="timeout"):
        get_model("openai-api/x", base_url="http://127.0.0.1:1/v1", timeout=3)


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    future = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (parse_retry_after({"retry-after": future}) or 0) <= 30


async def test_concurrent_negotiations_probe_once(serve: Any) -> None:
    server = serve(err(500, LLAMA_CPP_REFUSAL), ok("{}"), ok("never"))
    model, _ = model_for(server)
    modes = await asyncio.gather(*(provider_of(model).negotiate() for _ in range(4)))
    assert modes == ["json_object"] * 4 and len(server.requests) == 2


def test_the_max_tokens_option_caps_only_calls_without_a_budget() -> None:
    from confide.llm.providers.openai_api import OpenAIChatModel
    from confide.llm.spec import parse_spec

    url, key = "http://127.0.0.1:9/v1", "k" * 8
    model = OpenAIChatModel(parse_spec("openai-api/x"), base_url=url, api_key=key, max_tokens=256)
    assert model.request_params(HI, GenerateConfig())["max_tokens"] == 256
    assert model.request_params(HI, GenerateConfig(max_tokens=7))["max_tokens"] == 7
    plain = OpenAIChatModel(parse_spec("openai-api/x"), base_url=url, api_key=key)
    assert "max_tokens" not in plain.request_params(HI, GenerateConfig())
    from confide.llm.providers.openai_api import make_openai_model

    built = make_openai_model(parse_spec("openai-api/x"), base_url=url, max_tokens="64")
    assert built.default_max_tokens == 64  # YAML or --model-option strings are accepted
