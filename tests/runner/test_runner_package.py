"""`confide.runner` loads its entry points (`build`, `execute`) on first use: each public
name is the object of the submodule it lives in, and importing one submodule (what a Ray
worker imports) does not load the run's driver side."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import confide.runner as runner

HOMES = {"build_experiment": "build", "load_experiment": "build", "ConfigError": "config",
         "Experiment": "config", "RunSummary": "execute", "run_experiment": "execute",
         "run_experiment_async": "execute", "EpisodePlan": "expand", "expand": "expand",
         "PreflightError": "preflight", "RunPlan": "preflight", "preflight": "preflight"}


def test_the_public_names() -> None:
    assert sorted(runner.__all__) == sorted(HOMES)


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_public_name_is_its_submodule_s_object(name: str) -> None:
    home = importlib.import_module(f"confide.runner.{HOMES[name]}")
    assert getattr(runner, name) is getattr(home, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        runner.nothing  # noqa: B018


def test_the_ray_worker_s_module_loads_no_cli_facing_layer() -> None:
    script = (
        "import sys, confide.runner.ray_backend\n"
        "print(sorted(m for m in ('confide.runner.execute', 'confide.runner.build', "
        "'confide.runner.outputs', 'confide.report', 'rich', 'jinja2') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
