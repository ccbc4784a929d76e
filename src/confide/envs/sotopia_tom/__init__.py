"""Sotopia-ToM (the Sotopia-ToM paper): multi-party information sharing under privacy constraints.

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

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from confide.core.benchmark import BenchmarkSpec


def __getattr__(name: str) -> BenchmarkSpec:
    """`SPEC` from `spec.py`, imported on first use: the package stays light, so the
    registry reads `declaration.py` without importing the environment."""
    if name != "SPEC":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from confide.envs.sotopia_tom.spec import SPEC

    return SPEC
