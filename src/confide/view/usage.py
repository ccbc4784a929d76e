"""A run's model usage, summed from its traces for the viewer's usage panel: calls,
retries, tokens by kind, cost, failures and cache share, per model and in all.

Each `model_call` line carries its completion's usage (llm/types.Usage: input tokens, of
which cached and written to the provider's prompt cache, output tokens, of which
reasoning, and the priced cost). As `llm.usage.UsageMeter` counts them, a response-cache
hit (`cached`) is a call that spent nothing, and a call without a price is counted apart,
never as $0. Only the model-call lines are decoded, so a run of scripted seats costs one
read of its traces.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from confide.core.trace import trace_files, trace_text

_TOKENS = ("prompt_tokens", "cached_prompt_tokens", "cache_write_tokens",
           "completion_tokens", "reasoning_tokens")


@dataclass
class Usage:
    """Totals for one model (or for all)."""

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    """Provider attempts made again inside the calls (each `model_call` line's count)."""
    unpriced_calls: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, call: dict[str, Any]) -> None:
        """Count one decoded `model_call` line."""
        self.calls += 1
        self.retries += int(call.get("retries") or 0)
        if call.get("error"):
            self.failed_calls += 1
            return
        if call.get("cached"):
            self.cached_calls += 1
            return
        usage = (call.get("completion") or {}).get("usage") or {}
        for name in _TOKENS:
            setattr(self, name, getattr(self, name) + int(usage.get(name) or 0))
        cost = usage.get("cost_usd")
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += float(cost)

    def merge(self, other: Usage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def run_usage(run_dir: Path) -> dict[str, Any]:
    """Per model and in total, with the number of traces read."""
    models: dict[str, Usage] = {}
    traces = trace_files(run_dir / "traces")
    for path in traces:
        for line in trace_text(path).splitlines():
            if '"kind":"model_call"' in line:
                call = json.loads(line)
                models.setdefault(str(call.get("model", "")), Usage()).add(call)
    total = Usage()
    for usage in models.values():
        total.merge(usage)
    return {"traces": len(traces),
            "models": [{"model": m, **asdict(u)} for m, u in sorted(models.items())],
            "total": asdict(total)}
