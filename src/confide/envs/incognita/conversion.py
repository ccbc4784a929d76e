"""Convert a source task file and check every card: ``confide incognita convert``.

The transformation (`transform`; the Incognita paper, contribution 3, section 3.1) is accepted
for a task only when the coordination reference can be built for its card (section 4.1)
and the reference agent, with the LLM-free customer, desks and judge, solves that card in
every access condition (section 3.2: the conditions change who holds the tools, never
what the task requires). This module runs those episodes in memory -- no run directory,
no model -- and reports, per task, the card or the reason there is none, and per
condition how many cards the reference solved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.trace import TraceRecorder
from confide.envs.incognita.conditions import CONDITIONS
from confide.envs.incognita.env import ServiceTask, run_episode
from confide.envs.incognita.transform import Conversion, convert_file
from confide.envs.incognita.world import World
from confide.errors import ConfideError


def _no_models(spec: str, **_: Any) -> Any:
    raise ConfideError(f"the conversion check runs LLM-free participants only, not {spec!r}")


async def solves(task: ServiceTask, condition: str, seed: int = 0) -> bool:
    """Whether the reference agent, with the offline roles, solves `task` in `condition`."""
    ctx = EpisodeContext(
        episode_id=f"convert-{task.id}-{condition}",
        task=task,
        lineup=parse_lineup("reference"),
        seed=seed,
        trace=TraceRecorder(f"convert-{task.id}"),
        model_factory=_no_models,
        condition=condition,
    )
    result = await run_episode(ctx)
    return bool(result.metrics.get("success"))


@dataclass(frozen=True)
class ConversionReport:
    """Every task's conversion and, per condition, the cards the reference failed."""

    conversions: list[Conversion]
    conditions: tuple[str, ...]
    unsolved: dict[str, list[str]] = field(default_factory=dict)

    @property
    def cards(self) -> int:
        return sum(c.card is not None for c in self.conversions)

    def solved(self, condition: str) -> int:
        return self.cards - len(self.unsolved.get(condition, []))

    def lines(self) -> list[str]:
        """The summary, as printed by ``confide incognita convert``."""
        total = len(self.conversions)
        lines = [f"converted {self.cards} of {total} tasks"]
        lines += [f"reference solves {self.solved(c)} of {self.cards} in {c}"
                  + (f" (fails {', '.join(self.unsolved[c])})" if self.unsolved.get(c) else "")
                  for c in self.conditions]
        refused = [c for c in self.conversions if c.card is None]
        if refused:
            lines.append(f"not converted ({len(refused)}):")
            lines += [f"  task {c.task_id}: {c.reason}" for c in refused]
        return lines


async def _unsolved(
    tasks: Sequence[ServiceTask], conditions: Sequence[str]
) -> dict[str, list[str]]:
    unsolved: dict[str, list[str]] = {condition: [] for condition in conditions}
    for task in tasks:
        for condition in conditions:
            if not await solves(task, condition):
                unsolved[condition].append(task.id)
    return unsolved


def check(
    world: World, conversions: list[Conversion], conditions: Sequence[str] = CONDITIONS
) -> ConversionReport:
    """Run the reference on every converted card in every condition."""
    tasks = [ServiceTask(card=c.card, world=world, suite_id="converted")
             for c in conversions if c.card is not None]
    unsolved = asyncio.run(_unsolved(tasks, conditions))
    return ConversionReport(conversions, tuple(conditions), unsolved)


def convert_and_check(
    tasks_path: str | Path, world_path: str | Path, conditions: Sequence[str] = CONDITIONS
) -> ConversionReport:
    """`transform.convert_file`, then `check` (no conditions: conversion only)."""
    world, conversions = convert_file(tasks_path, world_path)
    return check(world, conversions, conditions)
