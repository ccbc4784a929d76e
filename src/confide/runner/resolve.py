"""The resolved experiment: every default the run would apply, made explicit.

`experiment.yaml` in a run directory, `run.json` and the resume fingerprints all use it,
so a run says exactly what it ran (the suite, the lineups, the conditions, each role's
binding, every option and the concurrency), and an option given at its default value is
the same configuration as the option left out. Two things stay implicit because they are
no single value: an option whose default depends on the task (declared with
`json_schema_extra={"task_default": True}`, e.g. CalBench's per-task turn budget) unless
given, and a role whose default is derived from other roles (declared with
`default=None`, e.g. Incognita's gate, which follows the customer). The environment's own
sampling settings (`BenchmarkSpec.sampling_defaults`) appear under `sampling`, the
experiment's settings over them field by field. An experiment without `output_dir` gets
its default run directory (`rundir.default_run_dir`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from confide.core.benchmark import BenchmarkSpec
from confide.core.sampling import Sampling
from confide.runner.config import Experiment
from confide.runner.rundir import default_run_dir


def resolved_options(model: type[BaseModel], raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` validated, with every default that does not depend on the task filled in."""
    options = model.model_validate(raw)
    dumped = options.model_dump(mode="json")
    return {
        name: value
        for name, value in dumped.items()
        if name in options.model_fields_set or not _task_default(model, name)
    }


def resolved_sampling(
    defaults: Mapping[str, Sampling], given: Mapping[str, Sampling]
) -> dict[str, Sampling]:
    """Per `seats` or role or seat: the environment's default settings with the
    experiment's over them, field by field."""
    empty = Sampling()
    return {
        key: Sampling.model_validate(
            {**defaults.get(key, empty).overrides(), **given.get(key, empty).overrides()}
        )
        for key in dict.fromkeys([*defaults, *given])
    }


def _task_default(model: type[BaseModel], name: str) -> bool:
    extra = model.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("task_default"))


def resolve_experiment(spec: BenchmarkSpec, experiment: Experiment) -> Experiment:
    """`experiment` with every default explicit (module docstring); call it on an
    experiment that passed the preflight."""
    roles = {role.name: role.default for role in spec.roles if role.default is not None}
    roles.update(experiment.roles)
    resolved = experiment.model_copy(
        update={
            "suite": experiment.suite
            if experiment.suite is not None or experiment.tasks is not None
            else spec.default_suite,
            "lineups": experiment.lineups
            or list(spec.default_lineups or (spec.default_lineup,)),
            "conditions": experiment.conditions
            or [c for c in spec.default_conditions or spec.conditions if c is not None]
            or None,
            "roles": roles,
            "options": resolved_options(spec.options, experiment.options),
            "sampling": resolved_sampling(spec.sampling_defaults, experiment.sampling),
            "concurrency": experiment.episodes_at_once,
        }
    )
    if resolved.output_dir is None:  # the default layout, named after the resolved fields
        resolved = resolved.model_copy(update={"output_dir": str(default_run_dir(resolved))})
    return resolved
