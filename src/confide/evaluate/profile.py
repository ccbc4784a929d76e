"""A model's profile: each benchmark's headline metrics with seeded 95% bootstrap
intervals over tasks, on three axes (coordination, privacy, cost), read from the run
directories of an evaluation alone.

A metric is the mean over tasks of the per-task mean of its column (a task's episodes,
seats, repetitions and, unless the metric is split by it, conditions averaged first, so
tasks weigh equally: the resampling unit of `confide.stats.bootstrap`). Cost comes from
the usage recorded with every model call in the traces: tokens and dollars per episode,
with a dollar figure only when every call was priced (`llm.pricing.cost_status`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from confide.core.eval_design import EvalDesign, EvalMetric
from confide.core.tables import number
from confide.core.trace import ModelCall, read_trace, trace_files
from confide.llm.pricing import cost_status
from confide.readers import read_run_table
from confide.stats.bootstrap import bootstrap_interval

SEED = 0
"""The bootstrap's seed: a profile is the same every time it is computed."""
CONFIDENCE = 0.95
WORST = 3
"""Episodes linked per benchmark, worst first."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Estimate(_Frozen):
    """A mean over tasks with its 95% percentile-bootstrap interval (None with fewer
    than two tasks), and the per-task values it came from (for paired comparisons)."""

    value: float | None
    lower: float | None = None
    upper: float | None = None
    tasks: dict[str, float] = {}
    missing: int = 0
    """Tasks with episodes but no value (e.g. every judge verdict failed): left out,
    never counted as zero."""


class Published(_Frozen):
    """One published number placed on a metric of the profile, marked as published."""

    paper: str
    table: str
    model: str
    setting: dict[str, str]
    value: float
    source: str = "published"


class MetricResult(_Frozen):
    """One headline number of one benchmark (`EvalMetric`), for one `group`: the values
    of its `by` columns joined by ", " (None: not split)."""

    benchmark: str
    name: str
    label: str
    axis: str
    meaning: str
    higher_is_better: bool
    group: str | None
    estimate: Estimate
    published: list[Published] = []


class CostResult(_Frozen):
    """Per episode: every model call's tokens, those of the evaluated model, and dollars
    (None with `status` `unpriced` or `partial` when some call had no price)."""

    episodes: int
    calls: Estimate
    tokens: Estimate
    model_tokens: Estimate
    usd: Estimate | None
    status: str | None = None


class WorstEpisode(_Frozen):
    """An episode to look at, with its `confide view` link."""

    episode_id: str
    task_id: str
    condition: str | None
    value: float | None
    link: str


class BenchmarkProfile(_Frozen):
    """One benchmark of a profile."""

    benchmark: str
    run_dir: str
    command: str
    design_note: str
    paper_design: str
    """The design the published numbers come from (the difference to `design_note`)."""
    roles: dict[str, str]
    role_sources: dict[str, str]
    episodes: int
    failed: int
    metrics: list[MetricResult]
    no_privacy: str
    cost: CostResult
    worst_by: str
    worst: list[WorstEpisode]


class Profile(_Frozen):
    """What `confide.evaluate` returns and `eval/<model>/profile.json` holds."""

    model: str
    design: str
    confidence: float = CONFIDENCE
    bootstrap_seed: int = SEED
    benchmarks: list[BenchmarkProfile]
    published_note: str = ""

    def metrics(self, axis: str | None = None) -> list[MetricResult]:
        """Every metric of every benchmark, or those of one axis."""
        return [m for b in self.benchmarks for m in b.metrics if axis in (None, m.axis)]


def estimate(per_task: Mapping[str, Sequence[float]]) -> Estimate:
    """The mean over tasks of each task's mean, with its bootstrap interval."""
    tasks = {task: sum(values) / len(values) for task, values in per_task.items() if values}
    missing = len(per_task) - len(tasks)
    if not tasks:
        return Estimate(value=None, missing=missing)
    values = list(tasks.values())
    if len(values) < 2:
        return Estimate(value=values[0], tasks=tasks, missing=missing)
    interval = bootstrap_interval(values, seed=SEED, confidence=CONFIDENCE)
    return Estimate(value=interval.estimate, lower=interval.lower, upper=interval.upper,
                    tasks=tasks, missing=missing)


def metric_results(run_dir: Path, design: EvalDesign,
                   model: str | None = None) -> list[MetricResult]:
    """Every declared metric of `design` from the run directory's tables; with `model`,
    only the rows of its seats where the tables name each row's seat spec
    (`EvalDesign.seat_column`)."""
    tables: dict[str, list[dict[str, Any]]] = {}
    results = []
    for metric in design.metrics:
        if metric.table not in tables:
            rows = _ok(read_run_table(run_dir, metric.table))
            tables[metric.table] = [r for r in rows
                                    if _seated(r.get(design.seat_column), model)]
        groups: dict[str | None, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for row in tables[metric.table]:
            value = number(row.get(metric.column))
            parts = [str(row.get(c) or "-") for c in metric.by]
            group = ", ".join(parts) if any(p != "-" for p in parts) else None
            per_task = groups[group]
            if value is not None:
                per_task[str(row[metric.task_column])].append(value * metric.scale)
            else:
                per_task.setdefault(str(row[metric.task_column]), [])
        for group in sorted(groups, key=str):
            results.append(_result(design.benchmark, metric, group, estimate(groups[group])))
    return results


def _seated(seat: Any, model: str | None) -> bool:
    """Whether a row whose seat spec is `seat` (None: the table names none) counts for
    `model` (None: every row counts); a seat's strategy suffix `:name` is allowed."""
    if model is None or seat is None:
        return True
    return str(seat) == model or str(seat).startswith(f"{model}:")


def _ok(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of finished episodes (results.csv has a status; other tables only those)."""
    return [row for row in rows if row.get("status", "ok") == "ok"]


def _result(benchmark: str, metric: EvalMetric, group: str | None,
            value: Estimate) -> MetricResult:
    return MetricResult(benchmark=benchmark, name=metric.name, label=metric.label,
                        axis=metric.axis, meaning=metric.meaning,
                        higher_is_better=metric.higher_is_better, group=group,
                        estimate=value)


def cost_result(run_dir: Path, model: str) -> CostResult:
    """Calls, tokens and dollars per episode from the traces' model calls."""
    calls: dict[str, list[float]] = defaultdict(list)
    tokens: dict[str, list[float]] = defaultdict(list)
    mine: dict[str, list[float]] = defaultdict(list)
    usd: dict[str, list[float]] = defaultdict(list)
    priced = total = episodes = 0
    for path in trace_files(run_dir / "traces"):
        trace = read_trace(path)
        if trace.footer is None or trace.footer.status != "ok":
            continue
        episodes += 1
        task = trace.header.scenario_id
        spent = own = dollars = 0.0
        count = 0
        unpriced = False
        for call in trace.of(ModelCall):
            usage = (call.completion or {}).get("usage") or {}
            used = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
            spent += used
            own += used if call.model == model else 0
            count += 1
            cost = usage.get("cost_usd")
            if cost is None:
                unpriced = True
            else:
                dollars += float(cost)
        calls[task].append(count)
        tokens[task].append(spent)
        mine[task].append(own)
        total += 1
        if not unpriced:
            priced += 1
            usd[task].append(dollars)
    status = cost_status(priced, total)
    return CostResult(episodes=episodes, calls=estimate(calls), tokens=estimate(tokens),
                      model_tokens=estimate(mine),
                      usd=estimate(usd) if status is None else None, status=status)


def worst_episodes(run_dir: Path, design: EvalDesign, run_index: int) -> list[WorstEpisode]:
    """The `WORST` episodes by the design's `worst` column (mean over seats), with links
    into the viewer bundle written next to the profile (`view/index.html`)."""
    column, ascending = design.worst
    per: dict[str, list[float]] = defaultdict(list)
    meta: dict[str, dict[str, Any]] = {}
    for row in read_run_table(run_dir, "results.csv"):
        episode = str(row["episode_id"])
        meta.setdefault(episode, row)
        if (value := number(row.get(column))) is not None:
            per[episode].append(value)

    def key(episode: str) -> tuple[int, float, str]:
        if meta[episode].get("status", "ok") != "ok":
            return (0, 0.0, episode)  # a failed episode first: it is the one to look at
        values = per[episode]
        if not values:
            return (2, 0.0, episode)
        mean = sum(values) / len(values)
        return (1, mean if ascending else -mean, episode)

    chosen = sorted(meta, key=key)[:WORST]
    return [
        WorstEpisode(
            episode_id=episode,
            task_id=str(meta[episode]["task_id"]),
            condition=meta[episode].get("condition") or None,
            value=sum(per[episode]) / len(per[episode]) if per[episode] else None,
            link=f"view/index.html#/episode/{run_index}/{episode}",
        )
        for episode in chosen
    ]
