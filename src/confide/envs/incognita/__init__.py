"""Incognita: retail customer service under three access structures (the Incognita paper).

One evaluated agent resolves a customer's request while the service-side tools are held
by the agent itself (``direct``), by one declared desk (``indirect``) or by six
role-isolated desks whose capabilities must be discovered (``social``). Success is the
source benchmark's: the final database state against the replayed gold state, plus the
card's output assertions checked by a judge. See `env` for the episode and its trace
events, `conditions` for the access structures, `execution` for the execution layer,
`gate` for the disclosure gate, `transform` for the transformation of tau-bench / tau2
retail tasks into cards (checked by `conversion`), `participants` for seats and roles,
`metrics` for evaluation and per-episode measures, `outputs` for the coordination
reference, the trajectory reader, failure types and the paper's tables and figures
(written into every run directory). The native tau-bench anchor (`native`, the paper's
fourth arm) runs when named (``--condition native``, the paper's experiment file); a run
that names no condition plays the three access structures.

    confide run incognita --condition social --lineup reference
    confide run incognita --lineup openai/gpt-5-mini --role customer=openai/gpt-5-mini \\
        --role desk=openai/gpt-5-mini --role judge=openai/gpt-4.1
        # a model agent needs model desks, customer and judge
    confide run incognita --lineup mock/incognita-prose --role customer=mock/incognita \\
        --role desk=mock/incognita --role judge=mock/incognita   # the same, offline
    confide run incognita --tasks tau2/tasks.json --world retail-data/   # `transform`
"""

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
