"""How many model calls a CalBench episode may make, for `confide run --dry-run`.

Per round (one per meeting, section 3 "Round structure"; engine/game.py) a model seat is
asked at most once per cheap-talk sweep (`max_turns_per_round` sweeps), then at most
`decision_retries + 1` times for its VOLUNTARY or DECISION batch (a seat is in one of
them), each ask up to `llm_agent.MAX_ATTEMPTS` calls of the repair loop; with
`reflection` it answers one reflection question per round (F.3; privacy/reflection.py),
up to `questions.DEFAULT_ATTEMPTS` calls. The judge gets one case per round and recipient
that was delivered a message (I.2; judge.py), each up to the same attempts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from confide.core.benchmark import CallBound, CallRange, SeatSpec
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.env import game_limits
from confide.envs.calbench.events import InvalidResponse
from confide.envs.calbench.options import EnvOptions
from confide.envs.calbench.participants.llm_agent import MAX_ATTEMPTS
from confide.envs.calbench.privacy.questions import DEFAULT_ATTEMPTS
from confide.envs.calbench.scenario import Scenario


def call_bounds(
    task: Scenario,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: EnvOptions,
    condition: str | None,
) -> dict[str, CallBound]:
    """Per model seat and the judge (when a model), the most calls one episode makes."""
    limits = game_limits(options, task)
    rounds = len(task.meetings)
    bounds: dict[str, CallBound] = {}
    for seat, spec in binding.items():
        if not spec.is_model:
            continue
        if limits.max_turns_per_round is None:
            bounds[seat] = CallBound(None, "max_turns_per_round is null: cheap talk has no "
                                           "turn budget")
            continue
        asks = limits.max_turns_per_round + limits.decision_retries + 1
        reflection = DEFAULT_ATTEMPTS if options.reflection else 0
        bounds[seat] = CallBound(rounds * (asks * MAX_ATTEMPTS + reflection))
    if "/" in roles.get("judge", ""):
        bounds["judge"] = CallBound(rounds * task.num_agents * DEFAULT_ATTEMPTS)
    return bounds


def invalid_replies(events: Sequence[Any]) -> dict[str, int]:
    """Per seat, its replies that never validated (`invalid_response` events: the seat
    passed the step; section 3.2's passive agent looks the same, so they are counted
    apart)."""
    counts: dict[str, int] = {}
    for event in events:
        if isinstance(event, InvalidResponse) and event.seat is not None:
            counts[event.seat] = counts.get(event.seat, 0) + 1
    return counts


def call_estimates(
    task: Scenario,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: EnvOptions,
    condition: str | None,
) -> dict[str, CallRange]:
    """Per model seat and the judge, the calls one episode is expected to make. A game's
    length is fixed by its task (one round per meeting, section 3), so the low end is
    one valid ask a round (a seat outside the round's meeting may not be asked in its
    cheap talk, nor decide; the reflection answer adds one, with `reflection`); the high
    end is `call_bounds`' most. The paper reports no calls per game; the expected value
    is every ask answered at its first attempt (repairs are the high end's): a round's
    participants speak in every sweep of the turn budget (Table 1's models send 3.0-3.8
    messages per meeting, most of the canonical budget of 4) and decide once; the other
    seats speak and submit a voluntary batch only under the all-agent groupchat, whose
    messages reach them (A.4), else not at all; every seat answers the reflection
    question every round; the judge reads one case per round and seat that was spoken
    to (the participants, every seat under the all-agent groupchat), once. The judge
    may get no case at all (no message delivered)."""
    bounds = call_bounds(task, binding, roles, options, condition)
    limits = game_limits(options, task)
    rounds = len(task.meetings)
    everyone = condition == "all-agent-groupchat"
    asks = (limits.max_turns_per_round or 0) + 1
    reached = [task.num_agents if everyone else len(m.participants) for m in task.meetings]
    source = "the game's structure: one round per meeting (section 3)"
    ranges: dict[str, CallRange] = {}
    for part, bound in bounds.items():
        if bound.calls is None:
            continue
        if part == "judge":
            ranges[part] = CallRange(0, sum(reached), bound.calls, source)
            continue
        reflection = int(options.reflection)
        agent = agent_of(part)
        spoken = sum(1 for m in task.meetings if everyone or agent in m.participants)
        low = rounds * (1 + reflection)
        ranges[part] = CallRange(low, spoken * asks + rounds * reflection, bound.calls,
                                 source)
    return ranges
