"""How many model calls a Sotopia-ToM episode may make, for `confide run --dry-run`.

The conversation ends after `max_turns` turns in all (section 5.3; env.py). With
`leave_ends="any"` every seat stays until the end, so in the round-robin a seat gets at
most ceil(max_turns / N) turns; with "all" a seat may outlast the others, so at most
max_turns. A turn asks once, twice with `reask_invalid_recipients`; each ask is one reply
of up to `repair_attempts` calls, plus, for ToM-Coach, the coach's note and, for the
stateful strategies, the state update (each up to the same attempts), and a stateful
agent builds its state once. The model judge answers each of the four metrics once, up
to `judge.llm.MAX_ATTEMPTS` calls.

The seats share the `max_turns` turns (one seat per turn), so the episode as a whole
(`EPISODE_CALLS`) makes at most `max_turns` turns of its costliest model seat, plus the
state builds and the judge: with "all" a seat may take every turn, but not every seat.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from confide.core.benchmark import EPISODE_CALLS, CallBound, CallRange, SeatSpec
from confide.envs.sotopia_tom.events import CoachFailure, InvalidOutput
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
    """Per model seat and the judge (when a model), the most calls one episode makes, and
    the most of all of them together."""
    turns = options.max_turns if options.leave_ends == "all" \
        else math.ceil(options.max_turns / len(task.agents))
    asks = 2 if options.reask_invalid_recipients else 1
    bounds: dict[str, CallBound] = {}
    per_turn: dict[str, int] = {}
    builds: dict[str, int] = {}
    for seat, spec in binding.items():
        if not spec.is_model:
            continue
        strategy = spec.strategy or "basic"
        per_turn[seat] = asks * (2 if strategy in EXTRA_CALL else 1) * options.repair_attempts
        builds[seat] = (strategy in STATEFUL) * options.repair_attempts
        bounds[seat] = CallBound(turns * per_turn[seat] + builds[seat])
    judge = len(METRICS) * MAX_ATTEMPTS if "/" in roles.get("judge", "") else 0
    if judge:
        bounds["judge"] = CallBound(judge)
    bounds[EPISODE_CALLS] = CallBound(
        options.max_turns * max(per_turn.values(), default=0) + sum(builds.values()) + judge
    )
    return bounds


def invalid_replies(events: Sequence[Any]) -> dict[str, int]:
    """Per seat, its acting and coach calls that never validated (`invalid_output`: the
    agent does nothing that turn; `coach_failure`: it acts without a note)."""
    counts: dict[str, int] = {}
    for event in events:
        if isinstance(event, InvalidOutput | CoachFailure) and event.seat is not None:
            counts[event.seat] = counts.get(event.seat, 0) + 1
    return counts


PAPER_TURNS = 33
"""Speak turns of an average conversation (section 6.3: "approximately 33 speak turns
over 18 rounds")."""


def call_estimates(
    task: Scenario,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: EnvOptions,
    condition: str | None,
) -> dict[str, CallRange]:
    """Per model seat and the judge, the calls one episode is expected to make: the
    paper's 33 speak turns (section 6.3, capped by `max_turns`) shared by the N agents,
    from the shortest episode the rules allow (`stale_turns` non-substantive turns end
    it) to `call_bounds`' most, each reply valid at its first call at the low end."""
    bounds = call_bounds(task, binding, roles, options, condition)
    agents = len(task.agents)
    low_turns = min(options.max_turns, options.stale_turns)
    expected_turns = min(options.max_turns, PAPER_TURNS)
    source = "paper section 6.3: about 33 speak turns per conversation"
    ranges: dict[str, CallRange] = {}
    for seat, spec in binding.items():
        if not spec.is_model:
            continue
        strategy = spec.strategy or "basic"
        per_turn = 2 if strategy in EXTRA_CALL else 1
        builds = int(strategy in STATEFUL)
        high = bounds[seat].calls or 0
        ranges[seat] = CallRange(
            low=(low_turns // agents) * per_turn + builds,
            expected=min(high, expected_turns / agents * per_turn + builds),
            high=high,
            source=source,
        )
    if "judge" in bounds:
        judge = bounds["judge"].calls or 0
        ranges["judge"] = CallRange(len(METRICS), len(METRICS), judge,
                                    "one call per metric (section 5), repairs at most")
    return ranges
