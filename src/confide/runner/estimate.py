"""Spend estimates before a run (`confide run --dry-run`): per model and
seat or role, the expected calls, input and output tokens and cost, each with a low-high
range. Every number here is an estimate, and the dry run says so.

Calls come from the benchmark (`BenchmarkSpec.call_estimates`: the papers' reported
episode lengths where they give them, else the episode's structure and its bounds).
Prompt sizes come from this very plan: the first episode of each lineup and condition is
rehearsed in memory with a stand-in that answers every call with a minimal instance of
the requested schema (no provider is called; at most `REHEARSAL_CALLS` calls and
`REHEARSAL_SECONDS` each, `REHEARSALS_SECONDS` in all), and each
seat's and role's prompts are measured at 4 characters a token (`CHARS_PER_TOKEN`; no
tokenizer is assumed). For a part with `low`, `expected` and `high` calls, first prompt
sizes between `p_min` and `p_max` tokens (its smallest and largest rehearsed prompt,
schemas and tools counted only in `p_max`), and a history that grows by `g` tokens a
call (`g_expected`: the rehearsal's mean growth a call, from its first prompt to its
last, plus one expected reply; `g_high`: its largest growth from one prompt to the
next, plus one longest reply):

- input: low = low * p_min; expected = expected * p_base + growth(expected, g_expected);
  high = high * p_max + growth(high, g_high), with growth(n, g) = g * n * (n - 1) / 2
  and p_base the first rehearsed prompt where the history grows (g > 0; the largest
  already holds the rehearsal's own growth), else p_max;
- output: low = one token a call; expected = `OUTPUT_EXPECTED` a call; high = the part's
  `max_tokens` (else `OUTPUT_HIGH`) a call;
- cost: the run's price table at list prices (input and output; prompt-cache discounts
  can make the real cost lower than the low end), or unpriced.

A part the rehearsal never reached (a judge after an episode the stand-in ended early)
takes the largest prompt rehearsed in its episode."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from confide.core.benchmark import CallRange, expand_lineup
from confide.core.trace import TraceRecorder
from confide.llm.pricing import PriceTable
from confide.llm.providers.json_instance import minimal_instance
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage
from confide.runner.config import Experiment
from confide.runner.episode import episode_context
from confide.runner.expand import EpisodePlan
from confide.runner.preflight import RunPlan

CHARS_PER_TOKEN = 4
REHEARSAL_CALLS = 400
REHEARSAL_SECONDS = 20.0
"""The most one rehearsal may take."""
REHEARSALS_SECONDS = 60.0
"""The most all of a dry run's rehearsals may take together: a lineup and condition
rehearsed after that reuses the prompts of its lineup's (or the first) rehearsal."""
OUTPUT_EXPECTED = 150
"""Output tokens of a typical reply (an estimate, not a measurement)."""
OUTPUT_HIGH = 1024
"""Output tokens of a call whose part sets no `max_tokens`."""


@dataclass
class Prompts:
    """What the rehearsal measured of one part's prompts, in tokens."""

    smallest: int = 0
    largest: int = 0
    first: int | None = None
    last: int = 0
    steepest: int = 0
    """The largest growth from one prompt to the next (the high end's growth)."""
    calls: int = 0

    @property
    def growth(self) -> int:
        """Tokens a call adds to the next one's prompt: the mean over the rehearsal,
        from its first prompt to its last (0 where prompts do not grow, e.g. a judge's
        independent cases). The first two prompts alone overstate it: a CalBench
        seat's first step after cheap talk is its decision, which brings the calendar."""
        if self.first is None or self.calls < 2:
            return 0
        return max(0, round((self.last - self.first) / (self.calls - 1)))

    @property
    def base(self) -> int:
        """The expected estimate's prompt before growth: the first prompt of a part
        whose history grows (its largest already holds the rehearsal's growth, which
        the growth term counts again), else the largest."""
        return self.first if self.growth and self.first is not None else self.largest

    def add(self, text_tokens: int, with_schema: int) -> None:
        self.smallest = text_tokens if not self.calls else min(self.smallest, text_tokens)
        self.largest = max(self.largest, with_schema)
        if self.first is None:
            self.first = with_schema
        else:
            self.steepest = max(self.steepest, with_schema - self.last)
        self.last = with_schema
        self.calls += 1


class _Enough(Exception):
    """The rehearsal has seen enough calls."""


class _StandIn:
    """Answers every call with a minimal instance of its schema, measuring the prompt."""

    def __init__(self, name: str, prompts: Prompts, counter: list[int]) -> None:
        self.name, self._prompts, self._counter = name, prompts, counter

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        if self._counter[0] >= REHEARSAL_CALLS:
            raise _Enough
        self._counter[0] += 1
        text = sum(len(m.content) // CHARS_PER_TOKEN for m in messages)
        extra = 0
        if config.response_schema is not None:
            extra += len(json.dumps(config.response_schema)) // CHARS_PER_TOKEN
        extra += sum(len(t.model_dump_json()) // CHARS_PER_TOKEN for t in config.tools)
        self._prompts.add(text, text + extra)
        schema = config.response_schema
        reply = json.dumps(minimal_instance(schema) if schema is not None else {})
        return Completion(model=self.name, text=reply, usage=Usage())


def rehearse(
    plan: RunPlan, episode: EpisodePlan, seconds: float = REHEARSAL_SECONDS
) -> dict[str, Prompts]:
    """The prompt sizes of every seat and role of `episode`, played against the stand-in
    (module docstring); whatever the episode did before it stopped, ended or failed."""
    found: dict[str, Prompts] = {}
    counter = [0]

    def factory(spec: str, *, seat: str | None, purpose: str, trace: Any,
                sampling: Any = None, part: str | None = None) -> _StandIn:
        key = part or seat or "unattributed"
        return _StandIn(spec, found.setdefault(key, Prompts()), counter)

    async def play() -> None:
        ctx = episode_context(plan.spec, episode, plan.experiment,
                              TraceRecorder(episode.episode_id), factory)  # type: ignore[arg-type]
        await asyncio.wait_for(plan.spec.run_episode(ctx), seconds)

    with contextlib.suppress(Exception):  # a stand-in's episode may end any way
        asyncio.run(play())
    return found


@dataclass
class Estimate:
    """One model's spend in one seat or role over the whole run: (low, expected, high)."""

    model: str
    part: str
    calls: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    input_tokens: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    output_tokens: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    sources: set[str] = field(default_factory=set)

    def add(self, calls: CallRange, prompts: Prompts, out_high: int) -> None:
        growth_high = prompts.steepest + out_high
        growth_expected = prompts.growth + OUTPUT_EXPECTED
        values = zip(
            (calls.low, calls.expected, calls.high),
            (
                calls.low * prompts.smallest,
                calls.expected * prompts.base
                + growth_expected * calls.expected * max(calls.expected - 1, 0) / 2,
                calls.high * prompts.largest
                + growth_high * calls.high * max(calls.high - 1, 0) / 2,
            ),
            (calls.low, calls.expected * OUTPUT_EXPECTED, calls.high * out_high),
            strict=True,
        )
        for i, (n, tokens_in, tokens_out) in enumerate(values):
            self.calls[i] += n
            self.input_tokens[i] += tokens_in
            self.output_tokens[i] += tokens_out
        self.sources.add(calls.source)

    def cost(self, prices: PriceTable) -> list[float] | None:
        price = prices.price(self.model)
        if price is None:
            return None
        out_high = max(price.output, price.reasoning or 0.0)
        rates = ((price.input, price.output), (price.input, price.output),
                 (price.input, out_high))
        return [
            (self.input_tokens[i] * rate_in + self.output_tokens[i] * rate_out) / 1e6
            for i, (rate_in, rate_out) in enumerate(rates)
        ]


def estimate(plan: RunPlan, experiment: Experiment) -> list[Estimate] | None:
    """Per model and seat or role, the run's estimated spend; None when the benchmark
    declares no `call_estimates`."""
    spec = plan.spec
    if spec.call_estimates is None:
        return None
    options = spec.options.model_validate(experiment.options)
    rehearsed: dict[tuple[str, str | None], dict[str, Prompts]] = {}
    found: dict[tuple[str, str], Estimate] = {}
    deadline = time.monotonic() + REHEARSALS_SECONDS
    for episode in plan.episodes:
        group = (episode.lineup_text, episode.condition)
        if group not in rehearsed:
            left = deadline - time.monotonic()
            if left > 0 or not rehearsed:
                rehearsed[group] = rehearse(plan, episode, min(REHEARSAL_SECONDS, max(left, 1)))
            else:
                rehearsed[group] = next(
                    (p for (lineup, _), p in rehearsed.items() if lineup == group[0]),
                    next(iter(rehearsed.values())),
                )
        prompts = rehearsed[group]
        largest = max((p.largest for p in prompts.values()), default=0)
        binding = expand_lineup(episode.lineup, spec.seats(episode.task))
        ranges = spec.call_estimates(episode.task, binding, experiment.roles, options,
                                     episode.condition)
        for part, calls in ranges.items():
            model = _model_of(part, binding, experiment.roles)
            if model is None:
                continue
            label = "seats" if part in binding else f"role {part}"
            entry = found.setdefault((model, label), Estimate(model, label))
            seen = prompts.get(part) or Prompts(smallest=0, largest=largest)
            entry.add(calls, seen, _max_tokens(experiment, part, binding, options))
    return [found[key] for key in sorted(found)]


def _model_of(part: str, binding: Mapping[str, Any], roles: Mapping[str, str]) -> str | None:
    if part in binding:
        model: str | None = binding[part].model
        return model
    bound = roles.get(part) or (roles.get("customer") if part == "gate" else None)
    return bound.split(":", 1)[0] if bound and "/" in bound else None


def _max_tokens(experiment: Experiment, part: str, binding: Mapping[str, Any],
                options: Any) -> int:
    """The part's `max_tokens` (its sampling settings, else the options'), else
    `OUTPUT_HIGH`."""
    key = "seats" if part in binding else part
    sampling = experiment.sampling.get(part) or experiment.sampling.get(key)
    if sampling is not None and sampling.max_tokens is not None:
        return int(sampling.max_tokens)
    limit = getattr(options, "max_tokens", None) if part in binding else None
    return int(limit) if isinstance(limit, int) else OUTPUT_HIGH


def describe(estimates: Sequence[Estimate], prices: PriceTable) -> list[str]:
    """The dry run's lines: one per model and seat or role, each number an estimate."""
    lines = [
        "estimated spend (estimates, not measurements: calls from each benchmark's episode "
        "lengths, tokens from this plan's rehearsed prompts at 4 characters a token, cost "
        "at list prices before prompt-cache discounts; expected (low-high)):"
    ]
    for entry in estimates:
        cost = entry.cost(prices)
        shown = "unpriced" if cost is None else (
            f"${cost[1]:.4f} (${cost[0]:.4f}-${cost[2]:.4f})"
        )
        lines.append(
            f"  {entry.model}, {entry.part}: calls {_n(entry.calls)}; input tokens "
            f"{_n(entry.input_tokens)}; output tokens {_n(entry.output_tokens)}; cost {shown}"
            f" [{'; '.join(sorted(entry.sources))}]"
        )
    return lines


def _n(values: Sequence[float]) -> str:
    low, expected, high = (round(v) for v in values)
    return f"{expected:,} ({low:,}-{high:,})"
