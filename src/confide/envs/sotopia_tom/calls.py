"""How many model calls a Sotopia-ToM episode may make, for `confide run --dry-run`.

The conversation ends after `max_turns` turns in all (section 5.3; env.py). With
`leave_ends="any"` every seat stays until the end, so in the round-robin a seat gets at
most ceil(max_turns / N) turns; with "all" a seat may outlast the others, so at most
max_turns. A turn asks once, twice with `reask_invalid_recipients`; each ask is one reply
of up to `repair_attempts` calls, plus, for ToM-Coach, the coach's note and, for the
stateful strategies, the state update (each up to the same attempts), and a stateful
agent builds its state once. The model judge answers each of the four metrics once, up
to `judge.llm.MAX_ATTEMPTS` calls.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from confide.core.benchmark import CallBound, SeatSpec
from confide.envs.sotopia_tom.judge.llm import MAX_ATTEMPTS
from confide.envs.sotopia_tom.judge.verdicts import METRICS
from confide.envs.sotopia_tom.options import EnvOptions
from confide.envs.sotopia_tom.scenario import Scenario

STATEFUL = frozenset({"tom-belief", "self-focused"})
EXTRA_CALL = STATEFUL | {"tom-coach"}
"""Strategies that make one more structured call before each reply."""


def call_bounds(
    task: Scenario,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: EnvOptions,
    condition: str | None,
) -> dict[str, CallBound]:
    """Per model seat and the judge (when a model), the most calls one episode makes."""
    turns = options.max_turns if options.leave_ends == "all" \
        else math.ceil(options.max_turns / len(task.agents))
    asks = turns * (2 if options.reask_invalid_recipients else 1)
    bounds: dict[str, CallBound] = {}
    for seat, spec in binding.items():
        if not spec.is_model:
            continue
        strategy = spec.strategy or "basic"
        replies = asks * (2 if strategy in EXTRA_CALL else 1) + (strategy in STATEFUL)
        bounds[seat] = CallBound(replies * options.repair_attempts)
    if "/" in roles.get("judge", ""):
        bounds["judge"] = CallBound(len(METRICS) * MAX_ATTEMPTS)
    return bounds
