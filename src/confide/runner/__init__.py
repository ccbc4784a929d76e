"""Experiments: YAML config, expansion into episodes, concurrent execution with resume."""

from confide.runner.build import build_experiment, load_experiment
from confide.runner.config import ConfigError, Experiment
from confide.runner.execute import RunSummary, run_experiment, run_experiment_async
from confide.runner.expand import EpisodePlan, expand
from confide.runner.preflight import PreflightError, RunPlan, preflight

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
