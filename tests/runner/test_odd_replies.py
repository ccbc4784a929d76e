"""One odd model reply never aborts an episode: a lone surrogate (raw
in the reply text, or as a JSON escape inside an otherwise well-shaped reply), a reply
of 1,000 unclosed `[` and one holding an integer of 5,000 digits (`int`
refuses more than 4,300) are invalid model output in every model seat and role of all
three benchmarks; the episode finishes `ok` with the failure recorded, and its trace and
the response cache are written and read back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.core.trace import read_trace
from confide.envs.calbench import events as calbench_events
from confide.envs.incognita import events as incognita_events
from confide.envs.sotopia_tom import events as sotopia_events
from confide.llm import (
    ChatMessage,
    GenerateConfig,
    MockModel,
    ResponseCache,
    parse_reply,
    register_mock,
    unregister_mock,
)
from confide.llm.providers.json_instance import minimal_instance
from confide.llm.types import Completion
from confide.runner import build_experiment, run_experiment
from confide.untrusted import REPLACEMENT


def _with_strings(value: Any, text: str) -> Any:
    if isinstance(value, str):
        return text
    if isinstance(value, dict):
        return {k: _with_strings(v, text) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_strings(v, text) for v in value]
    return value


def _escaped_surrogates(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """A reply of the requested shape whose every string is the escape `\\ud800`."""
    schema = config.response_schema
    return json.dumps(_with_strings(minimal_instance(schema) if schema else {}, "\ud800"))


def _raw_surrogate_in_json(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """A reply of the requested shape whose strings hold a raw lone surrogate."""
    schema = config.response_schema
    instance = _with_strings(minimal_instance(schema) if schema else {}, "x\ud800y")
    return json.dumps(instance, ensure_ascii=False)


ODD = {
    "raw-surrogate": lambda m, c: "a\ud800b",
    "raw-surrogate-in-json": _raw_surrogate_in_json,
    "escaped-surrogates": _escaped_surrogates,
    "unclosed-brackets": lambda m, c: "[" * 1000,
    "long-integer": lambda m, c: '{"action": ' + "9" * 5000 + "}",
}
INVALID_EVENT = {
    "calbench": calbench_events.InvalidResponse,
    "sotopia-tom": sotopia_events.InvalidOutput,
    "incognita": incognita_events.InvalidAction,
}
RUNS = {
    "calbench": {"suite": "tiny", "lineups": ["mock/odd"], "conditions": ["dm"]},
    "sotopia-tom": {"lineups": ["mock/odd:basic"], "roles": {"judge": "mock/odd"}},
    "incognita": {
        "lineups": ["mock/odd"],
        "conditions": ["indirect"],
        "sampling": {"seats": {"temperature": 0.0}},  # greedy: the agent's replies are cached
        "roles": {"customer": "mock/odd", "desk": "mock/odd", "judge": "mock/odd"},
    },
}


@pytest.fixture(params=sorted(ODD))
def odd(request: pytest.FixtureRequest) -> Iterator[str]:
    register_mock("odd", lambda **_: MockModel(ODD[request.param], name="odd"), replace=True)
    yield request.param
    unregister_mock("odd")


@pytest.mark.parametrize("benchmark", sorted(RUNS))
def test_odd_reply_is_invalid_output_not_an_episode_error(
    benchmark: str, odd: str, tmp_path: Path
) -> None:
    experiment = build_experiment({
        "benchmark": benchmark, "limit": 1, "output_dir": str(tmp_path / "run"),
        "cache_dir": str(tmp_path / "cache"), **RUNS[benchmark],
    })
    summary = run_experiment(experiment, show_progress=False)
    assert summary.failed == [] and {r["status"] for r in summary.rows} == {"ok"}
    for path in sorted((tmp_path / "run" / "traces").glob("*.jsonl.gz")):
        trace = read_trace(path)
        assert trace.footer is not None and trace.footer.status == "ok"
        calls = trace.model_calls()
        assert calls and all(c.completion is not None for c in calls)
        assert trace.of(INVALID_EVENT[benchmark]), f"{path.name}: nothing invalid"
        texts = [str((c.completion or {})["text"]) for c in calls]
        assert not any("\ud800" in text for text in texts)
    cached = list((tmp_path / "cache").rglob("*.json"))
    assert cached
    cache = ResponseCache(tmp_path / "cache")
    assert all(cache.get(p.stem) is not None for p in cached)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a\ud800b", "U+FFFD at character 1"),
        ('{"x": "\\ud800"}', "lone surrogate (\\ud800)"),
        ("[" * 1000, "more than 100 levels deep"),
        ("[" * 150 + "]" * 150, "more than 100 levels deep"),
        ('{"x": "a", "n": -' + "1" * 4301 + "}", "an integer of 4301 digits (the most is 4300)"),
        ("[" + "7" * 10**5 + "]", "(character 1)"),
    ],
)
def test_parse_reply_names_the_problem(text: str, problem: str) -> None:
    from pydantic import BaseModel

    class Anything(BaseModel):
        x: str = ""

    outcome = parse_reply(Completion(model="m", text=text), Anything)
    assert isinstance(outcome, str) and problem in outcome


def test_completion_text_and_prompts_never_hold_a_lone_surrogate() -> None:
    assert Completion(model="m", text="a\ud800b\udfff").text == f"a{REPLACEMENT}b{REPLACEMENT}"
    assert ChatMessage(role="user", content="\udcff").content == REPLACEMENT
    assert Completion(model="m", text="😀 ok").text == "😀 ok"


@pytest.mark.parametrize("reply", ["a\ud800b", "[" * 1000])
@pytest.mark.parametrize("schema", [False, True])
def test_models_try_survives_odd_replies(reply: str, schema: bool, tmp_path: Path) -> None:
    register_mock("odd", lambda **_: MockModel([reply], name="odd"), replace=True)
    args = ["models", "try", "mock/odd", "hi \udcff"]
    if schema:
        (tmp_path / "s.json").write_text('{"type": "object"}', encoding="utf-8")
        args += ["--schema", str(tmp_path / "s.json")]
    try:
        result = CliRunner().invoke(app, args)
    finally:
        unregister_mock("odd")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == (1 if schema else 0), result.output
    if schema:
        assert "reply is not valid JSON" in result.output


def test_a_server_error_body_with_a_lone_surrogate_is_writable() -> None:
    from confide.llm import ModelError

    error = ModelError("HTTP 500: {\"detail\": \"\ud800\"}", model="m", kind="server_error")
    assert REPLACEMENT in str(error)
    str(error).encode("utf-8")
