"""The `BenchmarkSpec` of Sotopia-ToM (the package docstring says what it declares); imported
when the benchmark is first used, so `declaration.py` is read without it."""

from pathlib import Path

from confide.core.benchmark import BenchmarkSpec
from confide.core.sampling import Sampling
from confide.envs.sotopia_tom.calls import call_bounds, call_estimates, invalid_replies
from confide.envs.sotopia_tom.dataset import split_names
from confide.envs.sotopia_tom.env import (
    load_tasks,
    private_markers,
    run_episode,
    score_episode,
    seats,
)
from confide.envs.sotopia_tom.events import EVENTS
from confide.envs.sotopia_tom.judge import ROLE as JUDGE
from confide.envs.sotopia_tom.metrics import summarize
from confide.envs.sotopia_tom.options import EnvOptions
from confide.envs.sotopia_tom.outputs.agreement import write_agreement
from confide.envs.sotopia_tom.outputs.write import write_sotopia_outputs
from confide.envs.sotopia_tom.participants import check_strategy
from confide.envs.sotopia_tom.view import VIEW

SPEC = BenchmarkSpec(
    id="sotopia-tom",
    description="Multi-party information sharing with public and private channels: "
    "DA, IA, EFF, CPV and InfoMgmt (Sotopia-ToM).",
    load_tasks=load_tasks,
    seats=seats,
    run_episode=run_episode,
    default_suite="core",
    suites=split_names(),
    participants=("reference", "leaky"),
    default_lineup="reference",
    summarize=summarize,
    private_markers=private_markers,
    score_episode=score_episode,
    compare_scores=write_agreement,
    options=EnvOptions,
    roles=(JUDGE,),
    check_strategy=check_strategy,
    events=EVENTS,
    write_outputs=write_sotopia_outputs,
    # the agents' calls (participants.make_participant) and the LLM judge's (judge/llm.py)
    sampling_defaults={"seats": Sampling(temperature=0.0), "judge": Sampling(temperature=0.0)},
    call_bounds=call_bounds,
    invalid_replies=invalid_replies,
    call_estimates=call_estimates,
    view=VIEW,
    published=Path(__file__).parent / "published",
)

__all__ = ["SPEC"]
