"""Providers register themselves: one `Provider` row is all a new provider needs. A
provider defined here, in the test, without touching `confide.llm`, runs an episode of
every benchmark end to end, gets its default connection limit, has its options checked
by name, and names its extra when the SDK is missing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from _openai_servers import EPISODES, run_with

from confide.llm import (
    ChatMessage,
    Completion,
    GenerateConfig,
    ModelError,
    ModelSpecError,
    Provider,
    Usage,
    get_model,
    parse_spec,
    register_provider,
    unregister_provider,
)
from confide.llm.providers.json_instance import minimal_instance
from confide.llm.registry import default_limits, get_provider, provider_names


class Schematic:
    """Answers every request with the smallest instance of its schema, tracking how many
    of its calls are in flight at once."""

    peak = 0
    active = 0

    def __init__(self, name: str, politeness: str = "plain") -> None:
        self.name = f"acme/{name}"
        self.politeness = politeness

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        Schematic.active += 1
        Schematic.peak = max(Schematic.peak, Schematic.active)
        await asyncio.sleep(0.001)
        Schematic.active -= 1
        schema = config.response_schema
        text = json.dumps(minimal_instance(schema)) if schema else "Sure."
        words = sum(len(m.content.split()) for m in messages)
        return Completion(
            model=self.name, text=text, finish_reason="stop",
            usage=Usage(prompt_tokens=words, completion_tokens=len(text.split())),
        )


ACME = Provider(
    name="acme",
    factory=Schematic,
    about="a provider defined by a test",
    max_connections=2,
    options={"politeness": "how polite (plain or formal)"},
)


@pytest.fixture
def acme() -> Iterator[Provider]:
    register_provider(ACME)
    yield ACME
    unregister_provider("acme")


def test_a_registered_provider_is_known_everywhere(acme: Provider) -> None:
    assert "acme" in provider_names()
    assert parse_spec("acme/one").provider == "acme"
    assert get_provider("acme") is acme
    assert default_limits()["acme"] == 2
    with pytest.raises(ModelSpecError, match=r"unknown option\(s\) colour \(known: politeness\)"):
        get_model("acme/one", colour="red")
    with pytest.raises(ModelSpecError, match="already registered"):
        register_provider(ACME)
    with pytest.raises(ModelSpecError, match="builtin"):
        register_provider(Provider(name="openai", factory=Schematic))


async def test_the_row_limits_connections(acme: Provider) -> None:
    hi = [ChatMessage(role="user", content="hi")]
    for spec, options, peak in (
        ("acme/one", {"politeness": "formal"}, 2),  # the provider's pool
        ("acme/two", {"max_connections": 5}, 5),  # a pool of its own
    ):
        Schematic.peak = 0
        model = get_model(spec, **options)
        await asyncio.gather(*(model.generate(hi, config=GenerateConfig()) for _ in range(9)))
        assert Schematic.peak == peak


@pytest.mark.parametrize("benchmark", sorted(EPISODES))
def test_a_registered_provider_runs_an_episode(
    acme: Provider, benchmark: str, tmp_path: Path
) -> None:
    summary, trace = run_with(benchmark, "acme/one", tmp_path / "run", {})
    assert trace.footer is not None and trace.footer.status == "ok", trace.footer
    assert summary.failed == []
    calls = [c for c in trace.model_calls() if c.completion is not None]
    assert calls and {c.model for c in calls} == {"acme/one"}


def test_a_missing_extra_is_one_line_naming_it() -> None:
    row = Provider(name="needy", factory=Schematic, extra="needy", requires=("no_such_sdk",))
    register_provider(row)
    try:
        with pytest.raises(ModelError) as caught:
            get_model("needy/x")
    finally:
        unregister_provider("needy")
    assert caught.value.kind == "missing_extra"
    assert "pip install 'confide[needy]'" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_bad_limit_option_is_one_clear_error() -> None:
    with pytest.raises(ModelSpecError, match=r"limiter must be a ProviderLimiter.*max_connections"):
        get_model("mock/echo", limiter=16)
    with pytest.raises(ModelSpecError, match="max_connections for mock/echo must be an integer"):
        get_model("mock/echo", max_connections=0)


