"""What an episode spent on models, and its invalid replies, by seat and role: the
one builder of the spend columns of every benchmark's
results.csv, of `spend.csv` (per lineup and condition) and of the run totals.

An episode's spend is read from its trace's model-call events, so it is known for a
failed episode too (every call recorded before the failure) and for one reused on
resume. Each call counts for its part (`ModelCall.part`, else its `seat`): a seat as the
lineup names it, or a role (judge, customer, desk...). A call served from the response
cache is counted at the usage the trace records (the call that produced it), so a row is
the same whether or not the cache served it; the money this process actually paid is
the run total (`UsageMeter`, run.json). Token counts follow `llm.types.Usage`:
`input_tokens` counts every prompt token, of which `cached_input_tokens` were read from
and `cache_write_tokens` written to the provider's prompt cache; `output_tokens` counts
every completion token, of which `reasoning_tokens` were hidden reasoning. A cost over
calls some of which have no known price reads `unpriced` or `partial`
(`llm.pricing.cost_status`), never a sum counting them as $0.

Columns, the same scheme in every benchmark: `seat_<kind>` (the row's seat),
`<role>_<kind>` for each role the benchmark declares (prefixed `role_`), and
`episode_<kind>` (every part together), with the kinds of `KINDS`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from confide.core.spend import KINDS
from confide.core.trace import ModelCall
from confide.llm.pricing import cost_status
from confide.llm.usage import ModelUsage

EPISODE = "episode"
UNATTRIBUTED = "unattributed"
"""The part of a call recorded with neither a seat nor a part (a benchmark's own helper)."""


@dataclass
class Spend:
    """One part's totals over one or more episodes."""

    calls: int = 0
    retries: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    invalid_replies: int = 0

    def add(self, other: Spend) -> None:
        """Add `other` into this one."""
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def count(self, call: ModelCall) -> None:
        """Add one recorded call (an error counts as a call with its retries, no tokens)."""
        self.calls += 1
        self.retries += call.retries
        usage = (call.completion or {}).get("usage") or {}
        if call.completion is None:
            return
        self.input_tokens += int(usage.get("prompt_tokens", 0))
        self.cached_input_tokens += int(usage.get("cached_prompt_tokens", 0))
        self.cache_write_tokens += int(usage.get("cache_write_tokens", 0))
        self.output_tokens += int(usage.get("completion_tokens", 0))
        self.reasoning_tokens += int(usage.get("reasoning_tokens", 0))
        cost = usage.get("cost_usd")
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += float(cost)

    def cells(self, prefix: str) -> dict[str, Any]:
        """The columns `<prefix>_<kind>` of `KINDS`."""
        answered = self.calls - self.unpriced_calls
        status = cost_status(answered, self.calls) if self.unpriced_calls else None
        values: dict[str, Any] = {kind: getattr(self, kind) for kind in KINDS}
        values["cost_usd"] = status or round(self.cost_usd, 8)
        return {f"{prefix}_{kind}": value for kind, value in values.items()}


def part_of(call: ModelCall) -> str:
    """The seat or role a call's spend counts for."""
    return call.part or call.seat or UNATTRIBUTED


def episode_spend(
    events: Iterable[Any], invalid: Mapping[str, int] | None = None
) -> dict[str, Spend]:
    """Part -> its spend over `events` (an episode's trace), with `invalid` (part -> its
    invalid replies, the benchmark's `invalid_replies` of the same events)."""
    parts: dict[str, Spend] = {}
    for event in events:
        if isinstance(event, ModelCall):
            parts.setdefault(part_of(event), Spend()).count(event)
    for part, count in (invalid or {}).items():
        parts.setdefault(part, Spend()).invalid_replies += count
    return parts


def total(parts: Iterable[Spend]) -> Spend:
    """The sum of `parts`."""
    result = Spend()
    for part in parts:
        result.add(part)
    return result


def spend_columns(
    parts: Mapping[str, Spend], roles: Sequence[str], seat: str | None
) -> dict[str, Any]:
    """The spend columns of one result row: its `seat`'s (none for a failed episode's
    row, which has no seat), each of `roles`' and the episode's."""
    columns: dict[str, Any] = {}
    if seat is not None:
        columns.update(parts.get(seat, Spend()).cells("seat"))
    for role in roles:
        columns.update(parts.get(role, Spend()).cells(f"role_{role}"))
    columns.update(total(parts.values()).cells(EPISODE))
    return columns


def spend_table(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per lineup and condition (spend.csv): episodes, failed episodes and the spend of
    the seats, each role and all together, each episode counted once (from its first
    row's `episode_`, `role_` and `seat_` cells; seat cells summed over its rows)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    seen: set[str] = set()
    for row in rows:
        key = (str(row.get("lineup", "")), str(row.get("condition", "") or ""))
        group = groups.setdefault(key, {"episodes": 0, "failed": 0, "cells": {}})
        cells: dict[str, Any] = group["cells"]
        if row.get("seat_calls") not in (None, ""):
            _add_cells(cells, row, "seat_", "seats_")
        episode = str(row.get("episode_id", ""))
        if episode in seen:
            continue
        seen.add(episode)
        group["episodes"] += 1
        group["failed"] += row.get("status", "ok") != "ok"
        for prefix in ("role_", "episode_"):
            _add_cells(cells, row, prefix, prefix)
    return [
        {"lineup": lineup, "condition": condition, "episodes": group["episodes"],
         "failed": group["failed"], **group["cells"]}
        for (lineup, condition), group in groups.items()
    ]


def _add_cells(into: dict[str, Any], row: Mapping[str, Any], prefix: str, to: str) -> None:
    """Add the `prefix` spend cells of `row` into `into` (renamed with `to`); a cost cell
    that reads `unpriced` or `partial` makes the sum `partial` unless every one is
    `unpriced`."""
    for column, value in row.items():
        if not column.startswith(prefix) or not any(column.endswith(k) for k in KINDS):
            continue
        name = to + column[len(prefix):]
        if value in (None, ""):
            continue
        if column.endswith("cost_usd"):
            into[name] = _add_cost(into.get(name), value)
        else:
            into[name] = into.get(name, 0) + int(value)


def _add_cost(so_far: Any, value: Any) -> Any:
    if so_far is None:
        return value if isinstance(value, str) and not _is_number(value) else float(value)
    labels = [v for v in (so_far, value) if isinstance(v, str) and not _is_number(v)]
    if not labels:
        return float(so_far) + float(value)
    return "unpriced" if labels == ["unpriced", "unpriced"] else "partial"


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def episodes_total(table: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The `episode_` spend of every lineup and condition of `spend_table` together, by
    kind (plus `episodes` and `failed`): what the run's episodes spent, reused and failed
    ones included."""
    totals: dict[str, Any] = {"episodes": 0, "failed": 0}
    for row in table:
        totals["episodes"] += int(row.get("episodes", 0))
        totals["failed"] += int(row.get("failed", 0))
        _add_cells(totals, row, "episode_", "")
    return totals


def run_spend(
    table: Iterable[Mapping[str, Any]], meter: Mapping[str, ModelUsage] | None
) -> dict[str, Any]:
    """run.json's `spend`: the episodes' totals (`episodes_total`) and, given the run's
    `UsageMeter` snapshot, what this process's calls cost per model and in all
    (`process`: cache hits at no cost, failed calls and retries counted); `line` says the
    episodes' totals in words (the report shows it)."""
    episodes = episodes_total(table)
    spend: dict[str, Any] = {"episodes": episodes, "line": spend_line(episodes)}
    if meter is not None:
        by_model = {model: process_totals(usage) for model, usage in sorted(meter.items())}
        whole = ModelUsage()
        for usage in meter.values():
            whole = whole.add(usage)
        spend["process"] = {"total": process_totals(whole), "by_model": by_model}
    return spend


def process_totals(usage: ModelUsage) -> dict[str, Any]:
    """One `ModelUsage` under the kinds' names."""
    return {
        "calls": usage.calls,
        "cached_calls": usage.cached_calls,
        "failed_calls": usage.failed_calls,
        "retries": usage.retries,
        "input_tokens": usage.prompt_tokens,
        "cached_input_tokens": usage.cached_prompt_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "output_tokens": usage.completion_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cost_usd": round(usage.cost_usd, 8),
        "unpriced_calls": usage.unknown_cost_calls,
    }


def spend_line(totals: Mapping[str, Any]) -> str:
    """One line for a terminal or the report: calls, retries, tokens by kind and cost."""
    cost = totals.get("cost_usd", 0.0)
    shown = f"${float(cost):.4f}" if not isinstance(cost, str) else cost
    unpriced = totals.get("unpriced_calls")
    if unpriced:
        shown += f" (+{unpriced} calls of unknown price)"
    return (
        f"calls {totals.get('calls', 0)}, retries {totals.get('retries', 0)}; tokens in "
        f"{totals.get('input_tokens', 0)} (cached {totals.get('cached_input_tokens', 0)}, "
        f"cache write {totals.get('cache_write_tokens', 0)}), out "
        f"{totals.get('output_tokens', 0)} (reasoning {totals.get('reasoning_tokens', 0)}); "
        f"cost {shown}"
    )
