"""Experiments from YAML files and plain mappings: validated field by field, then checked
against what the benchmark declares (`preflight.declared_problems`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from confide.errors import ConfideError
from confide.registry import get_benchmark
from confide.runner.config import ConfigError, Experiment
from confide.runner.preflight import declared_problems, preflight_problems, problems_message
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
    together with the problems only the tasks and the providers reveal. A field that fails
    validation is reported with every problem of the rest: the experiment is checked
    again with the failing fields at their defaults (the whole preflight without `check`),
    so one message names every mistake instead of one kind per attempt."""
    try:
        experiment = Experiment.model_validate(data)
    except ValidationError as exc:
        problems = [_field_problem(err, source) for err in exc.errors()]
        rest = _other_problems(data, exc, check)
        if rest:  # one list, as the preflight gives it
            raise ConfigError(problems_message(data["benchmark"], problems + rest)) from None
        raise ConfigError("\n".join(problems)) from None
    if check:
        declared = declared_problems(get_benchmark(experiment.benchmark), experiment)
        if declared:
            raise ConfigError("\n".join(f"{source}: {problem}" for problem in declared))
    return experiment


def _field_problem(err: ErrorDetails, source: str) -> str:
    """One validation error as '<source>: field 'F' (value: V): why'."""
    field = ".".join(str(p) for p in err["loc"]) or "<root>"
    value = err.get("input")
    shown = "" if isinstance(value, dict) else f" (value: {value!r})"
    return f"{source}: field '{field}'{shown}: {err['msg']}"


def _other_problems(data: dict[str, Any], exc: ValidationError, whole: bool) -> list[str]:
    """The problems of `data` beyond its invalid fields: those fields dropped (their
    defaults in their place), `declared_problems`, or with `whole` the whole preflight's;
    none when what is left does not validate either (the benchmark itself is wrong)."""
    failing = {err["loc"][0] for err in exc.errors() if err["loc"]}
    try:
        rest = Experiment.model_validate({k: v for k, v in data.items() if k not in failing})
        spec = get_benchmark(rest.benchmark)
    except (ValidationError, ConfideError):
        return []
    return preflight_problems(rest) if whole else declared_problems(spec, rest)
