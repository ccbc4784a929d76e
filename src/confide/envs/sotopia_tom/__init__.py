"""Sotopia-ToM (sotopia_tom.md): multi-party information sharing under privacy constraints.

Benchmark id `sotopia-tom`. Tasks are scenarios (`scenario.py`; suite `core`, or any
scenario JSON file via `--tasks`); seats are the scenario's agents in order. Reference
participants `reference` (policy-exact, typed payloads) and `leaky` (planted violations);
model seats take `provider/model[:strategy]` with strategies basic, cot-privacy,
tom-coach, tom-belief, self-focused. The judge is a declared role, bound with `--role
judge=SPEC`: the deterministic reference judge is the default for reference lineups, and a
lineup with any model seat must bind one. Environment options (`--option`): max_turns,
stale_turns, leave_ends, max_tokens, repair_attempts, reask_invalid_recipients,
memory_size (`options.EnvOptions`). Every run writes the paper's analyses (Figure 3a,
Figure 22, Table 4, the IA failure modes, paired win rates; `outputs.write`), and
`confide rescore` with a second judge writes the judge agreement (Table 6;
`outputs.agreement`).
"""

from pathlib import Path

from confide.core.benchmark import BenchmarkSpec
from confide.core.sampling import Sampling
from confide.envs.sotopia_tom.calls import call_bounds
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
    view=VIEW,
    published=Path(__file__).parent / "published",
)

__all__ = ["SPEC"]
