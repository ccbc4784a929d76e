"""The `BenchmarkSpec` of CalBench (the package docstring says what it declares); imported
when the benchmark is first used, so `declaration.py` is read without it."""

from pathlib import Path

from confide.core.benchmark import BenchmarkSpec, RoleSpec
from confide.core.sampling import Sampling
from confide.envs.calbench.actions import CONDITIONS
from confide.envs.calbench.audits.scored import tables_of
from confide.envs.calbench.calls import call_bounds, call_estimates, invalid_replies
from confide.envs.calbench.env import (
    load_tasks,
    private_markers,
    run_episode,
    score_episode,
    seats,
)
from confide.envs.calbench.events import EVENTS
from confide.envs.calbench.options import EnvOptions
from confide.envs.calbench.outputs.audits import write_calbench_outputs, write_calbench_tables
from confide.envs.calbench.outputs.table2 import summarize
from confide.envs.calbench.participants import REFERENCE_NAMES
from confide.envs.calbench.prompts import load_variant
from confide.envs.calbench.suites import suite_names
from confide.envs.calbench.view import VIEW

SPEC = BenchmarkSpec(
    id="calbench",
    description="N assistants with private calendars schedule a stream of meetings "
    "(success, excess cost vs a CP-SAT oracle, messages, fairness).",
    load_tasks=load_tasks,
    seats=seats,
    run_episode=run_episode,
    default_suite="canonical",
    suites=suite_names(),
    participants=REFERENCE_NAMES,
    default_lineup="imap",
    default_lineups=REFERENCE_NAMES,
    conditions=CONDITIONS,
    summarize=summarize,
    private_markers=private_markers,
    write_outputs=write_calbench_outputs,
    tables_of=tables_of,
    write_tables=write_calbench_tables,
    score_episode=score_episode,
    options=EnvOptions,
    roles=(
        RoleSpec(
            "judge", None, "the VPS judge model (F.3); unbound: no judge cases", scoring=True
        ),
    ),
    check_strategy=load_variant,
    events=EVENTS,
    # every call of a seat (turns, reflection) and of the VPS judge asks at temperature 0
    sampling_defaults={"seats": Sampling(temperature=0.0), "judge": Sampling(temperature=0.0)},
    call_bounds=call_bounds,
    invalid_replies=invalid_replies,
    call_estimates=call_estimates,
    view=VIEW,
    published=Path(__file__).parent / "published",
    task_group=lambda task: task.cost_setting,  # Table 1's N: seats per cost setting
    output_imports=("scipy.special",),  # audits/analyses.py: the G.2 paired t tests
)

__all__ = ["SPEC"]
