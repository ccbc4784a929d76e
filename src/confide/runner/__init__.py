"""Experiments: YAML config, expansion into episodes, concurrent execution with resume.

The entry points (`build`, `execute`) are imported on first use (PEP 562), so importing
one submodule does not load the whole runner: a Ray worker imports
`confide.runner.ray_backend` on the clock of every run it starts for, and needs the
player, not the run's driver with its outputs, report and progress bar (about a tenth of
a second of a core per worker)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# imported now: the worker needs them too, and `expand` and `preflight` are named like
# their submodules (bound here, the function wins over the module, as callers expect)
from confide.runner.config import ConfigError, Experiment
from confide.runner.expand import EpisodePlan, expand
from confide.runner.preflight import PreflightError, RunPlan, preflight

if TYPE_CHECKING:
    from confide.runner.build import build_experiment, load_experiment
    from confide.runner.execute import RunSummary, run_experiment, run_experiment_async

_LAZY = {
    "build_experiment": "build",
    "load_experiment": "build",
    "RunSummary": "execute",
    "run_experiment": "execute",
    "run_experiment_async": "execute",
}
"""The public names imported on first use, and the submodule each lives in."""

__all__ = [
    "ConfigError",
    "EpisodePlan",
    "Experiment",
    "PreflightError",
    "RunPlan",
    "RunSummary",
    "build_experiment",
    "expand",
    "load_experiment",
    "preflight",
    "run_experiment",
    "run_experiment_async",
]


def __getattr__(name: str) -> object:
    """The public name `name`, from its submodule (imported now if it was not yet)."""
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'confide.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(f"confide.runner.{home}"), name)
