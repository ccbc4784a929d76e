"""The `BenchmarkSpec` of Incognita (the package docstring says what it declares); imported
when the benchmark is first used, so `declaration.py` is read without it."""

from pathlib import Path

from confide.core.benchmark import BenchmarkSpec
from confide.envs.incognita.calls import call_bounds, call_estimates, invalid_replies
from confide.envs.incognita.conditions import CONDITIONS, INCOGNITA_CONDITIONS
from confide.envs.incognita.env import (
    DEFAULT_SUITE,
    load_source_tasks,
    load_tasks,
    private_markers,
    run_episode,
    score_episode,
    seats,
    task_problems,
)
from confide.envs.incognita.events import EVENTS
from confide.envs.incognita.metrics import summarize
from confide.envs.incognita.options import EnvOptions
from confide.envs.incognita.outputs.write import write_outputs
from confide.envs.incognita.participants import (
    MOCKS,
    REFERENCES,
    ROLES,
    SAMPLING_DEFAULTS,
    register_mocks,
)
from confide.envs.incognita.view import VIEW

SPEC = BenchmarkSpec(
    id="incognita",
    description="Retail service tasks under direct, one-intermediary and six-desk access.",
    load_tasks=load_tasks,
    seats=seats,
    run_episode=run_episode,
    default_suite=DEFAULT_SUITE,
    suites=(DEFAULT_SUITE,),
    participants=REFERENCES,
    default_lineup="reference",
    conditions=CONDITIONS,
    default_conditions=INCOGNITA_CONDITIONS,
    summarize=summarize,
    private_markers=private_markers,
    write_outputs=write_outputs,
    load_source_tasks=load_source_tasks,
    task_problems=task_problems,
    score_episode=score_episode,
    options=EnvOptions,
    roles=ROLES,
    prepare_model=register_mocks,
    mocks=MOCKS,
    demo=tuple(spec for spec, _ in MOCKS),
    events=EVENTS,
    sampling_defaults=SAMPLING_DEFAULTS,
    call_bounds=call_bounds,
    invalid_replies=invalid_replies,
    call_estimates=call_estimates,
    view=VIEW,
    published=Path(__file__).parent / "published",
    output_imports=("confide.envs.incognita.outputs.figures",),  # matplotlib
)

__all__ = ["SPEC"]
