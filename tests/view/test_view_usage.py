"""The viewer's run-level usage panel data (view/usage.py): summed from the traces'
model-call lines as the usage meter counts them (cache hits spend nothing, an unpriced
call is never $0)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from confide.view.usage import run_usage


def _call(model: str, *, cached: bool = False, error: str | None = None,
          cost: float | None = 0.5, retries: int = 0, **tokens: int) -> str:
    usage = {"prompt_tokens": 100, "completion_tokens": 10, **tokens, "cost_usd": cost}
    call = {"kind": "model_call", "model": model, "cached": cached, "error": error,
            "completion": None if error else {"usage": usage}}
    if retries:  # the trace leaves a zero count out
        call["retries"] = retries
    return json.dumps(call, separators=(",", ":"))


def test_usage_sums_calls_tokens_cost_and_cache_by_model(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    lines = [
        '{"kind":"episode_start"}',
        _call("a", cached_prompt_tokens=40, reasoning_tokens=3),
        _call("a", cost=None, cache_write_tokens=7),
        _call("a", cached=True),
        _call("b", error="HTTP 500", retries=4),
        _call("b", cost=0.25, retries=1),
    ]
    (traces / "e1.jsonl.gz").write_bytes(gzip.compress("\n".join(lines[:3]).encode()))
    (traces / "e2.jsonl.gz").write_bytes(gzip.compress("\n".join(lines[3:]).encode()))
    usage = run_usage(tmp_path)
    a, b = usage["models"]
    assert (a["model"], a["calls"], a["cached_calls"], a["unpriced_calls"]) == ("a", 3, 1, 1)
    assert (a["prompt_tokens"], a["cached_prompt_tokens"], a["cache_write_tokens"]) == (200, 40, 7)
    assert (a["completion_tokens"], a["reasoning_tokens"], a["cost_usd"]) == (20, 3, 0.5)
    assert (b["calls"], b["failed_calls"], b["prompt_tokens"], b["cost_usd"]) == (2, 1, 100, 0.25)
    assert (a["retries"], b["retries"], usage["total"]["retries"]) == (0, 5, 5)
    total = usage["total"]
    assert (usage["traces"], total["calls"], total["cost_usd"], total["prompt_tokens"]) == (
        2, 5, 0.75, 300)
