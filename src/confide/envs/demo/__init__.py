"""`demo`: a tiny relay game that exercises the whole runtime (postbox, participants,
model calls, traces, runner) without any benchmark logic.

Seats sit in a ring. For `rounds` rounds each seat in turn observes what was delivered to
it since its last turn and sends one direct message to the next seat. The reference
participant `scripted` writes a deterministic summary; a model seat asks its chat model.
Metrics count messages and invalid (empty) model replies.
"""

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
