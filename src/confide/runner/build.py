"""Experiments from YAML files and plain mappings: validated field by field, then checked
against what the benchmark declares (`preflight.declared_problems`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from confide.registry import get_benchmark
from confide.runner.config import ConfigError, Experiment
from confide.runner.preflight import declared_problems
from confide.untrusted import InputError, load_yaml


def load_experiment(
    path: Path | str, overrides: dict[str, Any] | None = None, *, check: bool = True
) -> Experiment:
    """Read and validate an experiment YAML file, applying CLI overrides on top (`check`:
    see `build_experiment`)."""
    path = Path(path)
    try:
        data = load_yaml(path, "experiment file")
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of fields, got {type(data).__name__}")
    for key, value in (overrides or {}).items():
        mergeable = key in ("sampling", "model_options")
        if mergeable and isinstance(value, dict) and isinstance(data.get(key), dict):
            merged = dict(data[key])  # per seat, role or model scope, field by field
            for who, fields in value.items():
                before = merged.get(who)
                if isinstance(before, dict) and isinstance(fields, dict):
                    fields = {**before, **fields}
                merged[who] = fields
            data[key] = merged
        elif value is not None:
            data[key] = value
    return build_experiment(data, source=str(path), check=check)


def build_experiment(
    data: dict[str, Any], source: str = "command line", *, check: bool = True
) -> Experiment:
    """Validate experiment fields, then (with `check`) what the benchmark declares: its
    options, roles, participants, strategies, conditions and sampling keys
    (`preflight.declared_problems`). Every error names source, field and value. The CLI
    passes `check=False` and runs the whole preflight instead, which reports these
    together with the problems only the tasks and the providers reveal."""
    try:
        experiment = Experiment.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "<root>"
            value = err.get("input")
            shown = "" if isinstance(value, dict) else f" (value: {value!r})"
            problems.append(f"{source}: field '{field}'{shown}: {err['msg']}")
        raise ConfigError("\n".join(problems)) from None
    if check:
        declared = declared_problems(get_benchmark(experiment.benchmark), experiment)
        if declared:
            raise ConfigError("\n".join(f"{source}: {problem}" for problem in declared))
    return experiment
