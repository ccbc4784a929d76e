"""The paper's experimental design: a Latin-square schedule and the experiment file.

The Incognita paper (section 5 "Models and execution" and "Schedule"): eighteen task
cards, each evaluated model, three repetitions per cell, every access condition. One
*worker* runs the same (task, model, repetition) through all conditions in sequence, with
the order of the conditions rotated by a Latin square, so that the arms of every paired
comparison fall inside one time window and no arm is systematically run first.

Decisions
- The schedule itself (`latin_schedule`, `schedule_rows`) lives in
  `confide.stats.design`; the experiment file sets `schedule: latin-square`, so the runner
  executes each worker's conditions in its row's order, one after another.
- The paper runs four arms, the three conditions and the native tau-bench anchor, 216
  trials each, 864 in all (section 5: 18 tasks x 4 models x 3 repetitions per arm). The
  anchor is the ``native`` condition here (`confide.envs.incognita.native`), so the
  square is 4 x 4 over the arms in the order of the paper's ladder (section 3.2: native,
  direct, indirect, social); it adapts to however many arms are given.
- The native arm's user simulator is bound apart (role ``user``): the paper runs it, and
  the judge, on gpt-4.1, and the Incognita customer and desks on gpt-5.5 (section 5). It
  keeps the environment's simulator temperature, 0 (the paper gives none for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from confide import atomic
from confide.stats.design import (
    DesignError,
    Worker,
    latin_schedule,
    latin_square,
    schedule_rows,
    validate_levels,
)

__all__ = [
    "PAPER_CONDITIONS",
    "PAPER_MODELS",
    "PAPER_REPETITIONS",
    "PAPER_ROLES",
    "PAPER_SAMPLING",
    "PAPER_SEED",
    "DesignError",
    "Worker",
    "experiment_yaml",
    "latin_schedule",
    "latin_square",
    "paper_experiment",
    "schedule_rows",
    "write_experiment_file",
]

PAPER_CONDITIONS: tuple[str, ...] = ("native", "direct", "indirect", "social")
"""The four arms in the order of the paper's ladder (section 3.2): the native anchor, then
the three access conditions (direct, indirect, social)."""
PAPER_MODELS: tuple[str, ...] = (
    "openai/gpt-5.2-2025-12-11",
    "openai/gpt-5.4-2026-03-05",
    "openai/gpt-5.5-2026-04-23",
    "openai/gpt-5.6-sol",
)
"""The four evaluated models of section 5, in release order."""
PAPER_ROLES: dict[str, str] = {
    "customer": "openai/gpt-5.5-2026-04-23",
    "desk": "openai/gpt-5.5-2026-04-23",
    "user": "openai/gpt-4.1-2025-04-14",
    "judge": "openai/gpt-4.1-2025-04-14",
}
"""Simulated parties: customer and every desk on one model, the native arm's user
simulator and the fixed judge on another (section 5)."""
PAPER_SAMPLING: dict[str, dict[str, Any]] = {
    "seats": {"temperature": 1.0, "reasoning_effort": "high"},
    "customer": {"temperature": 0.0, "reasoning_effort": "none"},
    "desk": {"temperature": 0.0, "reasoning_effort": "none"},
}
"""Section 5, "Models and execution": the evaluated agents "at high reasoning effort and
temperature 1"; the customer simulator and every service-side participant "at temperature
0 and no reasoning effort" (the gate classifier is the customer's model and follows its
settings). The judge's settings are not given; it keeps the environment's temperature 0."""
PAPER_REPETITIONS = 3
PAPER_SEED = 20260820
"""Our seed for the study (any fixed value; recorded in the file)."""


def paper_experiment(
    *,
    models: Sequence[str] = PAPER_MODELS,
    conditions: Sequence[str] = PAPER_CONDITIONS,
    repetitions: int = PAPER_REPETITIONS,
    roles: dict[str, str] | None = None,
    seed: int = PAPER_SEED,
    output_dir: str = "runs/incognita_paper",
    cache_dir: str | None = "runs/cache",
    concurrency: int = 8,
) -> dict[str, Any]:
    """The fields of the paper's experiment: default suite (18 cards) x models x
    conditions x repetitions, customer, desks and judge bound by role, with the paper's
    sampling settings (`PAPER_SAMPLING`)."""
    names = validate_levels("models", models)
    validate_levels("conditions", conditions)
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise DesignError(f"repetitions must be an integer >= 1; got {repetitions!r}")
    return {
        "benchmark": "incognita",
        "lineups": list(names),
        "conditions": list(conditions),
        "schedule": "latin-square",
        "roles": dict(PAPER_ROLES if roles is None else roles),
        "sampling": {who: dict(fields) for who, fields in PAPER_SAMPLING.items()},
        "repetitions": repetitions,
        "seed": seed,
        "concurrency": concurrency,
        "output_dir": output_dir,
        "cache_dir": cache_dir,
    }


_HEADER = """\
# Incognita: the paper's design (the Incognita paper, section 5), written by
# confide.envs.incognita.outputs.design.write_experiment_file -- regenerate, do not edit.
# 18 task cards (the default suite) x {models} models x {conditions} arms x {reps}
# repetitions = {episodes} episodes. Each (task, model, repetition) worker runs the
# arms one after another in the order of confide.stats.design.latin_schedule: a
# cyclic Latin square, row (task + model + repetition) mod k.
# Smoke form, offline with the environment's mocks (demo numbers, marked DEMO):
#   confide run experiments/incognita_paper.yaml --limit 2 --repetitions 1
#     --lineup mock/incognita-skilled --lineup mock/incognita-prose
#     --role customer=mock/incognita --role user=mock/incognita
#     --role desk=mock/incognita --role judge=mock/incognita --out runs/incognita_smoke
"""


def experiment_yaml(fields: dict[str, Any], *, n_tasks: int = 18) -> str:
    """The experiment file text for `fields` (see `paper_experiment`)."""
    models = len(fields["lineups"])
    conditions = len(fields["conditions"])
    reps = int(fields["repetitions"])
    header = _HEADER.format(
        models=models,
        conditions=conditions,
        reps=reps,
        episodes=n_tasks * models * conditions * reps,
    )
    return header + yaml.safe_dump(fields, sort_keys=False)


def write_experiment_file(path: Path | str, fields: dict[str, Any] | None = None) -> Path:
    """Write the experiment file (default: the paper's design) and return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return atomic.write_text(target, experiment_yaml(fields or paper_experiment()))
