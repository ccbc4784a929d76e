"""Expansion of an experiment into episodes with deterministic ids and seeds."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from confide.core.benchmark import BenchmarkSpec, SeatSpec, parse_lineup
from confide.core.seeding import derive_seed
from confide.errors import ConfideError
from confide.runner.config import Experiment
from confide.stats.design import latin_schedule


@dataclass(frozen=True)
class EpisodePlan:
    """One episode to run: which task, lineup, condition and repetition, with its seed."""

    episode_id: str
    task: Any
    lineup_text: str
    lineup: tuple[SeatSpec, ...]
    condition: str | None
    repetition: int
    seed: int


def select_tasks(spec: BenchmarkSpec, experiment: Experiment) -> list[Any]:
    """The experiment's tasks: a suite, a file, or a source benchmark's file on its world,
    optionally filtered by id and limited."""
    if experiment.suite is not None and experiment.tasks is not None:
        raise ConfideError("give either a suite or a task file, not both")
    if experiment.world is None:
        tasks = list(spec.load_tasks(experiment.suite, experiment.tasks))
    elif spec.load_source_tasks is None:
        raise ConfideError(f"{spec.id} takes no world (--world {experiment.world})")
    elif experiment.tasks is None:
        raise ConfideError(f"--world {experiment.world} needs --tasks: the source task file")
    else:
        tasks = list(spec.load_source_tasks(experiment.tasks, experiment.world))
    if not tasks and experiment.tasks is not None:  # an empty file is a mistake, not a run
        raise ConfideError(f"{experiment.tasks}: no tasks in file")
    if experiment.task_ids is not None:
        by_id = {t.id: t for t in tasks}
        missing = [i for i in experiment.task_ids if i not in by_id]
        if missing:
            raise ConfideError(f"task ids not found: {', '.join(missing)}")
        tasks = [by_id[i] for i in experiment.task_ids]
    if experiment.limit is not None:
        tasks = tasks[: experiment.limit]
    return tasks


def expand(spec: BenchmarkSpec, experiment: Experiment) -> list[EpisodePlan]:
    """Every (task, lineup, condition, repetition) combination, in a stable order."""
    tasks = select_tasks(spec, experiment)
    lineups = experiment.lineups or list(spec.default_lineups or (spec.default_lineup,))
    conditions: Sequence[str | None] = experiment.conditions or list(
        spec.default_conditions or spec.conditions
    )
    unknown = [c for c in conditions if c not in spec.conditions]
    if unknown:
        known = ", ".join(str(c) for c in spec.conditions)
        raise ConfideError(f"{spec.id} has no condition {unknown[0]!r}; available: {known}")
    parsed = {text: parse_lineup(text) for text in lineups}  # one tuple per lineup, shared
    plans = []
    for task in tasks:
        for lineup_text in lineups:
            for condition in conditions:
                for rep in range(experiment.repetitions):
                    parts = [task.id, lineup_text, condition or "-", f"r{rep}"]
                    plans.append(
                        EpisodePlan(
                            episode_id=episode_id(parts),
                            task=task,
                            lineup_text=lineup_text,
                            lineup=parsed[lineup_text],
                            condition=condition,
                            repetition=rep,
                            seed=derive_seed(experiment.seed, task.id, rep),
                        )
                    )
    ids = [p.episode_id for p in plans]
    if len(set(ids)) != len(ids):
        raise ConfideError("duplicate episodes: a task id or lineup is listed twice")
    return plans


def episode_id(parts: Sequence[str]) -> str:
    """A readable, file-safe id with a short hash of the exact parts (so distinct specs
    never collide after slugging)."""
    slug = "__".join(re.sub(r"[^A-Za-z0-9._-]+", "-", p).strip("-") for p in parts)
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:8]
    return f"{slug[:150]}__{digest}"


def worker_chains(
    experiment: Experiment, plans: Sequence[EpisodePlan], todo: Sequence[EpisodePlan]
) -> list[list[EpisodePlan]]:
    """Groups of the `todo` episodes that run one after another.

    `grid`: every episode alone. `latin-square` (the Incognita paper, section 5, "Schedule"): one
    chain per (task, lineup, repetition) worker, its conditions ordered by the worker's row
    of the Latin square (`confide.stats.design.latin_schedule`), so the arms of each
    paired comparison run back to back and no condition is systematically first. Rows are
    computed from the whole experiment (`plans`), so a resumed run keeps the same orders.
    """
    if experiment.schedule == "grid":
        return [[plan] for plan in todo]
    pending = {p.episode_id for p in todo}
    arms: dict[tuple[str, str, int, str], EpisodePlan] = {
        (p.task.id, p.lineup_text, p.repetition, p.condition or "-"): p for p in plans
    }
    workers = latin_schedule(
        list(dict.fromkeys(p.task.id for p in plans)),
        list(dict.fromkeys(p.lineup_text for p in plans)),
        experiment.repetitions,
        list(dict.fromkeys(p.condition or "-" for p in plans)),
    )
    chains = []
    for w in workers:
        chain = [
            plan
            for condition in w.order
            if (plan := arms.get((w.task_id, w.model, w.repetition, condition))) is not None
            and plan.episode_id in pending
        ]
        if chain:
            chains.append(chain)
    return chains
