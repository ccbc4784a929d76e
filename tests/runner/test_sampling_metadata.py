"""Sampling settings and run metadata with the resolved experiment
(item 8)."""

from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path

import pytest
import yaml

from confide.core.sampling import Sampling, sampling_for
from confide.core.trace import ModelCall, read_trace
from confide.llm.providers.openai_api import OpenAIChatModel
from confide.llm.request import request_key
from confide.llm.spec import parse_spec
from confide.llm.types import ChatMessage, GenerateConfig
from confide.registry import get_benchmark
from confide.runner import build_experiment, load_experiment, run_experiment
from confide.runner.expand import expand
from confide.runner.fingerprint import episode_fingerprints
from confide.runner.preflight import preflight
from confide.runner.resolve import resolve_experiment

REPO = Path(__file__).resolve().parents[2]


def test_a_seats_own_settings_win_over_the_shared_ones_field_by_field() -> None:
    table = {
        "seats": Sampling(temperature=1.0, reasoning_effort="high"),
        "ada": Sampling(temperature=0.2),
        "judge": Sampling(max_tokens=99),
    }
    seats = {"ada", "ben"}
    assert sampling_for(table, seat="ada", role=None, seats=seats) == Sampling(
        temperature=0.2, reasoning_effort="high"
    )
    assert sampling_for(table, seat="ben", role=None, seats=seats) == table["seats"]
    assert sampling_for(table, seat=None, role="judge", seats=seats) == table["judge"]
    # a role's call never takes the seats' settings, even when made for a seat name
    assert sampling_for(table, seat="ada", role="desk", seats=seats) is None


def _params(model: str, config: GenerateConfig) -> dict[str, object]:
    spec = parse_spec(model)
    chat = OpenAIChatModel(spec, base_url="http://127.0.0.1:1/v1", api_key="EMPTY")
    return chat.request_params([ChatMessage(role="user", content="hi")], config)


def test_openai_maps_each_setting_to_its_parameter() -> None:
    high = GenerateConfig(temperature=1.0, top_p=0.9, reasoning_effort="high", max_tokens=50)
    params = _params("openai/gpt-5.2-2025-12-11", high)
    # a reasoning model at its default temperature: neither temperature nor top_p is sent
    assert "temperature" not in params and "top_p" not in params
    assert params["reasoning_effort"] == "high"
    assert params["max_completion_tokens"] == 50
    none = GenerateConfig(temperature=0.0, reasoning_effort="none")
    params = _params("openai/gpt-5.5-2026-04-23", none)
    assert params["temperature"] == 0.0 and params["reasoning_effort"] == "none"
    params = _params("openai-api/qwen", GenerateConfig(temperature=0.3, top_p=0.5, max_tokens=7))
    assert (params["temperature"], params["top_p"], params["max_tokens"]) == (0.3, 0.5, 7)
    assert "reasoning_effort" not in params


def test_request_keys_without_the_new_settings_are_unchanged() -> None:
    """Cache entries and recorded calls stored before top_p and reasoning_effort existed
    keep their keys."""
    messages = [ChatMessage(role="user", content="hi")]
    config = GenerateConfig(temperature=0.5, seed=3)
    old_payload = {
        "messages": [{"role": "user", "content": "hi"}],
        "config": {"temperature": 0.5, "max_tokens": None, "seed": 3,
                   "response_schema": None, "stop": []},
        "model": "mock/echo",
    }
    canonical = json.dumps(old_payload, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"))
    assert request_key(messages, config, "mock/echo") == hashlib.sha256(
        canonical.encode()
    ).hexdigest()
    assert request_key(messages, config.model_copy(update={"top_p": 0.5}), "mock/echo") != (
        request_key(messages, config, "mock/echo")
    )


def test_a_run_applies_records_and_resolves(tmp_path: Path) -> None:
    out = tmp_path / "run"
    experiment = build_experiment({
        "benchmark": "demo",
        "lineups": ["mock/echo"],
        "task_ids": ["ring-2x4"],
        "sampling": {"seats": {"temperature": 0.7, "top_p": 0.5}, "ada": {"seed": 11}},
        "output_dir": str(out),
    })
    summary = run_experiment(experiment, show_progress=False)
    assert not summary.failed
    (path,) = (out / "traces").iterdir()
    trace = read_trace(path)
    calls = [e for e in trace.events if isinstance(e, ModelCall)]
    assert calls
    for call in calls:
        assert call.config["temperature"] == 0.7 and call.config["top_p"] == 0.5
        assert call.config["max_tokens"] == 64  # the environment's own setting stays
        assert call.config["seed"] == (11 if call.seat == "ada" else None)
    header = trace.header
    assert header.config["sampling"] == {  # the demo's own max_tokens, made explicit
        "seats": {"temperature": 0.7, "top_p": 0.5, "max_tokens": 64}, "ada": {"seed": 11}
    }
    assert header.versions["python"] == platform.python_version()
    assert "pydantic" in header.versions and "confide" in header.versions
    assert header.config["host"]["cpu_count"] == os.cpu_count()
    # a local episode has no worker placement (the run metadata once landed there)
    assert "placement" not in header.config
    run = json.loads((out / "run.json").read_text())
    assert run["versions"] == header.versions
    assert run["cpu_count"] == os.cpu_count() and run["started_at"].endswith("Z")
    resolved = yaml.safe_load((out / "experiment.yaml").read_text())
    assert resolved == run["experiment"]
    assert resolved["suite"] == "default" and resolved["lineups"] == ["mock/echo"]
    assert resolved["concurrency"] == 4
    # the resolved file runs the same experiment again: everything is resumed
    again = run_experiment(load_experiment(out / "experiment.yaml"), show_progress=False)
    assert again.skipped == again.episodes == 1


def test_defaults_are_explicit_and_an_explicit_default_is_the_same_configuration() -> None:
    spec = get_benchmark("sotopia-tom")
    plain = build_experiment({"benchmark": "sotopia-tom", "limit": 1})
    explicit = build_experiment({"benchmark": "sotopia-tom", "limit": 1,
                                 "options": {"max_turns": 60}, "roles": {"judge": "reference"}})
    resolved = resolve_experiment(spec, plain)
    assert resolved.roles == {"judge": "reference"}
    assert resolved.options["max_turns"] == 60 and resolved.options["leave_ends"] == "any"
    assert resolved.suite == "core" and resolved.lineups == ["reference"]

    def prints(experiment: object) -> dict[str, dict[str, str]]:
        full = resolve_experiment(spec, experiment)  # type: ignore[arg-type]
        return episode_fingerprints(spec.id, full, expand(spec, full))

    assert prints(plain) == prints(explicit)
    changed = build_experiment({"benchmark": "sotopia-tom", "limit": 1,
                                "options": {"max_turns": 30}})
    assert prints(changed) != prints(plain)
    sampled = build_experiment({"benchmark": "sotopia-tom", "limit": 1,
                                "sampling": {"judge": {"temperature": 0.5}}})
    (episode,) = prints(sampled).values()
    assert episode["sampling.judge.temperature"] == "0.5"
    assert prints(sampled) != prints(plain)


def test_task_dependent_defaults_stay_implicit() -> None:
    """CalBench's turn and retry budgets default to each task's own: filling in 20 would
    change the `tiny` suite's games (budget 2)."""
    spec = get_benchmark("calbench")
    resolved = resolve_experiment(spec, build_experiment({"benchmark": "calbench"}))
    assert "max_turns_per_round" not in resolved.options
    assert "decision_retries" not in resolved.options
    assert resolved.options["reflection"] is True
    given = build_experiment({"benchmark": "calbench", "options": {"decision_retries": 3}})
    assert resolve_experiment(spec, given).options["decision_retries"] == 3


@pytest.mark.parametrize(
    ("name", "episodes", "sampling"),
    [
        ("incognita_paper.yaml", 864, {
            "seats": {"temperature": 1.0, "reasoning_effort": "high"},
            "customer": {"temperature": 0.0, "reasoning_effort": "none"},
            "desk": {"temperature": 0.0, "reasoning_effort": "none"},
        }),
        ("sotopia_tom_paper.yaml", None, {
            "seats": {"reasoning_effort": "high"},
            "judge": {"reasoning_effort": "high"},
        }),
    ],
)
def test_the_paper_experiments_pass_the_preflight_with_a_key(
    name: str, episodes: int | None, sampling: dict[str, dict[str, object]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000000000")
    experiment = load_experiment(REPO / "experiments" / name)
    assert {k: v.overrides() for k, v in experiment.sampling.items()} == sampling
    plan = preflight(experiment)
    if episodes is not None:
        assert len(plan.episodes) == episodes
    assert plan.episodes
