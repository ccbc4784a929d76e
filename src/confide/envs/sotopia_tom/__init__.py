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

from confide.declaration import lazy_spec

__getattr__ = lazy_spec(__name__)
