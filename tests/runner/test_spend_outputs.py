"""Spend in every output: one episode of each benchmark against a local
fake OpenAI-compatible server that reports cached and reasoning tokens the way OpenAI
does, priced from a custom table with a cached-input and a reasoning price. The
results.csv cost equals the hand computation over the server's own replies; the tokens
by kind, spend.csv, run.json and the invalid-reply counts agree."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from tests.llm._openai_servers import EPISODES, SMALL_BUDGETS, FakeServer

from confide.core.trace import read_trace
from confide.llm.structured_output import PROBE_MESSAGES
from confide.llm.tools import TOOL_PROBE_MESSAGES
from confide.runner import Experiment, RunSummary, build_experiment, run_experiment

MODEL = "openai-api/fake-priced"
PRICE = {"input": 2.0, "cached_input": 0.5, "output": 8.0, "reasoning": 16.0}
"""USD per million tokens (reasoning priced apart so a wrong split shows)."""
PROBES = [[m.model_dump() for m in probe] for probe in (PROBE_MESSAGES, TOOL_PROBE_MESSAGES)]


class CachingServer(FakeServer):
    """vLLM-shaped replies whose usage says a quarter of the prompt was read from the
    cache and a third of the completion was reasoning (OpenAI's `*_tokens_details`); it
    keeps every usage it reported."""

    def __init__(self) -> None:
        super().__init__("vllm")
        self.usages: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, reply = super().answer(body)
        if body["messages"] in PROBES:
            return status, reply  # negotiation, not metered by the provider (not a call)
        usage = reply["usage"]
        usage["prompt_tokens"] += 40  # a small prompt still has something to cache
        usage["completion_tokens"] += 30
        usage["prompt_tokens_details"] = {"cached_tokens": usage["prompt_tokens"] // 4}
        usage["completion_tokens_details"] = {
            "reasoning_tokens": usage["completion_tokens"] // 3
        }
        self.usages.append(usage)
        return status, reply


def _hand_cost(usage: dict[str, Any]) -> float:
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    reasoning = usage["completion_tokens_details"]["reasoning_tokens"]
    return (
        (usage["prompt_tokens"] - cached) * PRICE["input"]
        + cached * PRICE["cached_input"]
        + (usage["completion_tokens"] - reasoning) * PRICE["output"]
        + reasoning * PRICE["reasoning"]
    ) / 1e6


def _price_table(path: Path) -> Path:
    path.write_text(json.dumps({
        "version": "test-1", "as_of": "2026-01-01", "source": "the test",
        "models": {MODEL: {**PRICE, "date": "2026-01-01", "source": "the test"}},
    }), encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("benchmark", ["calbench", "sotopia-tom", "incognita"])
def test_results_cost_is_the_hand_computed_cached_and_reasoning_price(
    benchmark: str, tmp_path: Path
) -> None:
    server = CachingServer()
    try:
        run_priced(benchmark, tmp_path / "run", server.base_url, tmp_path / "prices.json")
    finally:
        server.close()
    assert server.usages, "the episode called the server"
    rows = _rows(tmp_path / "run" / "results.csv")
    episode = rows[0]
    assert len({r["episode_cost_usd"] for r in rows}) == 1  # the same on every seat row
    expected = sum(_hand_cost(u) for u in server.usages)
    assert float(episode["episode_cost_usd"]) == pytest.approx(expected, abs=1e-7)
    assert int(episode["episode_calls"]) == len(server.usages)
    kinds = {
        "episode_input_tokens": sum(u["prompt_tokens"] for u in server.usages),
        "episode_cached_input_tokens": sum(
            u["prompt_tokens_details"]["cached_tokens"] for u in server.usages),
        "episode_output_tokens": sum(u["completion_tokens"] for u in server.usages),
        "episode_reasoning_tokens": sum(
            u["completion_tokens_details"]["reasoning_tokens"] for u in server.usages),
        "episode_cache_write_tokens": 0,
        "episode_retries": 0,
    }
    assert {k: int(episode[k]) for k in kinds} == kinds
    # the parts add up to the episode: every seat row's own calls plus every role's
    seat_calls = sum(int(r["seat_calls"]) for r in rows)
    role_calls = sum(int(v) for k, v in episode.items()
                     if k.startswith("role_") and k.endswith("_calls"))
    assert seat_calls + role_calls == len(server.usages)
    # spend.csv and run.json carry the same totals
    (spent,) = _rows(tmp_path / "run" / "spend.csv")
    assert float(spent["episode_cost_usd"]) == pytest.approx(expected, abs=1e-7)
    assert int(spent["episodes"]) == 1
    run = json.loads((tmp_path / "run" / "run.json").read_text("utf-8"))
    assert run["spend"]["episodes"]["cost_usd"] == pytest.approx(expected, abs=1e-7)
    assert run["spend"]["process"]["total"]["cached_input_tokens"] == (
        kinds["episode_cached_input_tokens"])
    # summary.csv: the model's row gives its mean spend per seat
    model_rows = [r for r in rows if MODEL in r.get("participant", MODEL)]
    per_seat = sum(float(r["seat_cost_usd"]) for r in model_rows) / len(model_rows)
    summary = [r for r in _rows(tmp_path / "run" / "summary.csv") if r.get("seat_cost_usd")]
    assert any(float(r["seat_cost_usd"]) == pytest.approx(per_seat, abs=1e-9) for r in summary)
    report = (tmp_path / "run" / "report.html").read_text("utf-8")
    assert f"calls {len(server.usages)}, retries 0" in report


def priced_experiment(benchmark: str, out: Path, base_url: str, prices: Path) -> Experiment:
    """One episode of `benchmark` on the small budgets of the conformance tests, `MODEL`
    in every model seat and role, priced from the test's table."""
    fields = json.loads(json.dumps(EPISODES[benchmark]).replace("{model}", MODEL))
    return build_experiment({
        "benchmark": benchmark, "limit": 1, "output_dir": str(out), **fields,
        "options": SMALL_BUDGETS[benchmark], "price_table": str(_price_table(prices)),
        "model_options": {"openai-api": {"base_url": base_url}},
    })


def run_priced(benchmark: str, out: Path, base_url: str, prices: Path) -> RunSummary:
    """Run `priced_experiment`."""
    experiment = priced_experiment(benchmark, out, base_url, prices)
    return run_experiment(experiment, show_progress=False)


class JunkServer(CachingServer):
    """Answers every call with prose where JSON is asked (each one an invalid reply);
    from call `fail_from` on, refuses every call for good (HTTP 401)."""

    def __init__(self, fail_from: int | None = None) -> None:
        super().__init__()
        self.fail_from = fail_from

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, reply = super().answer(body)
        if body["messages"] in PROBES:
            return status, reply
        if self.fail_from is not None and len(self.usages) > self.fail_from:
            self.usages.pop()  # refused: nothing reported, nothing to pay
            return 401, {"error": {"message": "invalid key", "type": "invalid_request_error",
                                   "param": None, "code": "invalid_api_key"}}
        reply["choices"][0]["message"]["content"] = "I would rather not say."
        return status, reply


INVALID_EVENTS = {
    "calbench": ("invalid_response",),
    "sotopia-tom": ("invalid_output", "coach_failure"),
    "incognita": ("invalid_action",),
}


@pytest.mark.parametrize("benchmark", ["calbench", "sotopia-tom", "incognita"])
def test_invalid_replies_are_counted_per_seat_and_role(benchmark: str, tmp_path: Path) -> None:
    """A model that answers only junk shows as invalid replies, per seat
    in its rows and in all in spend.csv, as many as the trace's invalid-reply events."""
    server = JunkServer()
    try:
        run_priced(benchmark, tmp_path / "run", server.base_url, tmp_path / "prices.json")
    finally:
        server.close()
    (trace_path,) = (tmp_path / "run" / "traces").glob("*.jsonl.gz")
    events = [e for e in read_trace(trace_path).events
              if getattr(e, "name", None) in INVALID_EVENTS[benchmark]]
    assert events, "junk replies gave invalid-reply events"
    rows = _rows(tmp_path / "run" / "results.csv")
    seats = sum(int(r["seat_invalid_replies"]) for r in rows)
    roles = sum(int(v) for k, v in rows[0].items()
                if k.startswith("role_") and k.endswith("_invalid_replies"))
    assert seats + roles == int(rows[0]["episode_invalid_replies"]) == len(events)
    (spent,) = _rows(tmp_path / "run" / "spend.csv")
    assert int(spent["episode_invalid_replies"]) == len(events)


def test_a_failed_episode_keeps_what_it_spent(tmp_path: Path) -> None:
    """The server refuses for good from its third call: the episode fails, and its one
    row carries the two answered calls' tokens and cost."""
    server = JunkServer(fail_from=2)
    try:
        summary = run_priced("sotopia-tom", tmp_path / "run", server.base_url,
                             tmp_path / "prices.json")
    finally:
        server.close()
    assert summary.failed and len(server.usages) == 2
    (row,) = _rows(tmp_path / "run" / "results.csv")
    assert row["status"] == "error"
    assert int(row["episode_calls"]) == 3  # two answered, one refused
    assert int(row["episode_input_tokens"]) == sum(u["prompt_tokens"] for u in server.usages)
    expected = sum(_hand_cost(u) for u in server.usages)
    assert float(row["episode_cost_usd"]) == pytest.approx(expected, abs=1e-7)


def test_a_resumed_run_reads_the_spend_back_from_its_traces(tmp_path: Path) -> None:
    """Every episode reused on resume: the spend columns come from the traces' model
    calls, so results.csv and spend.csv are byte-identical to the first run's."""
    experiment = build_experiment({
        "benchmark": "sotopia-tom", "limit": 2, "lineups": ["mock/json"],
        "roles": {"judge": "mock/json"}, "options": {"max_turns": 4},
        "output_dir": str(tmp_path / "run"),
    })
    run_experiment(experiment, show_progress=False)
    first = {name: (tmp_path / "run" / name).read_bytes()
             for name in ("results.csv", "spend.csv")}
    assert b"episode_calls" in first["results.csv"]
    again = run_experiment(experiment, show_progress=False)
    assert again.skipped == 2
    assert {name: (tmp_path / "run" / name).read_bytes() for name in first} == first
