"""The `BenchmarkSpec` of the demo (the package docstring says what it declares); imported
when the benchmark is first used, so `declaration.py` is read without it."""

from confide.core.benchmark import BenchmarkSpec
from confide.core.sampling import Sampling
from confide.envs.demo.env import call_bounds, load_tasks, run_episode, seats, summarize
from confide.envs.demo.events import EVENTS

SPEC = BenchmarkSpec(
    id="demo",
    description="Relay ring that exercises the runtime (no benchmark logic).",
    load_tasks=load_tasks,
    seats=seats,
    run_episode=run_episode,
    default_suite="default",
    suites=("default",),
    participants=("scripted",),
    default_lineup="scripted",
    summarize=summarize,
    private_markers=lambda task: {s: [f"secret-of-{s}-{task.id}"] for s in task.seats},
    events=EVENTS,
    call_bounds=call_bounds,
    sampling_defaults={"seats": Sampling(temperature=0.0, max_tokens=64)},  # participants.py
)

__all__ = ["SPEC"]
