"""How many model calls an Incognita episode may make, for `confide run --dry-run`.

Each factor is a loop limit of the episode (`env.Episode`), with T = `max_turns`, S =
`desk_steps` and A = `max_attempts` (one model call per attempt of a repair loop:
`llm.generate_structured`, `desk_llm.ModelDesk.act`; a transient error's retries are
inside one recorded call):

- agent: one ask per turn (the opening line is the customer's, with no call), each up to
  A calls: T * A.
- A turn sends at most one message. To the customer: the gate's classification first
  (only for a message with no typed payload; up to A calls, the ``gate`` role, by default
  the customer's model), then one plain call of the customer (no repair loop): T and
  T * A over the episode. To a desk (none under ``direct``): up to S steps, each up to A
  calls, until the desk replies: T * S * A.
- judge: scoring asks once, up to A calls, and only when the card has output
  assertions (`metrics.evaluate`); 0 calls otherwise.
- the native arm (`native`) has no customer, gate or desk: its user simulator (the
  ``user`` role) writes the opening message, then answers each message sent to it with
  one plain call: T + 1.

Each part can reach its bound in some episode (every attempt unusable but the last), but
not all in the same one: a turn's message goes to the customer or to a desk, never both.
So the episode as a whole (`EPISODE_CALLS`) makes at most T * (A + max(A + 1, S * A))
calls plus the judge's, for the parts bound to models: 8,103 at the defaults (T = 300,
S = 8, A = 3) with every role a model, where the parts sum to 9,303.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from confide.core.benchmark import EPISODE_CALLS, CallBound, CallRange, SeatSpec
from confide.envs.incognita.conditions import AGENT, AGENT_HOLDS_TOOLS, NATIVE
from confide.envs.incognita.env import ServiceTask
from confide.envs.incognita.events import InvalidAction
from confide.envs.incognita.options import EnvOptions
from confide.envs.incognita.participants import LINEUP_SEAT


def _is_model(binding: str) -> bool:
    return "/" in binding


def call_bounds(
    task: ServiceTask,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: EnvOptions,
    condition: str | None,
) -> dict[str, CallBound]:
    """Per model seat and model-bound role, the most calls one episode makes, and the
    most of all of them together (see the module docstring)."""
    turns, steps, attempts = options.max_turns, options.desk_steps, options.max_attempts
    agent = attempts if any(spec.is_model for spec in binding.values()) else 0
    customer = roles.get("customer", "")
    native = condition == NATIVE
    per_turn = {
        "customer": int(_is_model(customer) and not native),
        "user": int(_is_model(roles.get("user", "")) and native),
        "gate": attempts if _is_model(roles.get("gate", customer)) and not native else 0,
        "desk": steps * attempts if _is_model(roles.get("desk", ""))
        and condition not in AGENT_HOLDS_TOOLS else 0,
    }
    opening = per_turn["user"]  # the native user's first message
    judge_model = _is_model(roles.get("judge", ""))
    judge = attempts if judge_model and task.card.output_assertions else 0
    bounds = {seat: CallBound(turns * agent) for seat, spec in binding.items() if spec.is_model}
    bounds.update((role, CallBound(turns * calls)) for role, calls in per_turn.items() if calls)
    if opening:
        bounds["user"] = CallBound(turns + opening)
    if judge_model:
        bounds["judge"] = CallBound(judge)
    message = max(per_turn["customer"] + per_turn["gate"] + per_turn["user"], per_turn["desk"])
    bounds[EPISODE_CALLS] = CallBound(turns * (agent + message) + opening + judge)
    return bounds


def invalid_replies(events: Sequence[Any]) -> dict[str, int]:
    """The agent's turns and the desks' steps with no usable action (`invalid_action`),
    under the part names of the spend columns: the lineup's seat and the ``desk`` role."""
    counts: dict[str, int] = {}
    for event in events:
        if isinstance(event, InvalidAction):
            part = LINEUP_SEAT if event.seat == AGENT else "desk"
            counts[part] = counts.get(part, 0) + 1
    return counts


LONGEST_TRIAL = 150
"""The most turns any trial of the paper's run used (of 300 allowed; section 4)."""


def call_estimates(
    task: ServiceTask,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: EnvOptions,
    condition: str | None,
) -> dict[str, CallRange]:
    """Per model seat and role, the calls one episode is expected to make. The paper
    gives no mean episode length, only its longest trial (150 turns, section 4), so the
    range runs from the shortest episode (one agent turn: FINAL; no customer, desk or
    judge call needed; in the native arm, the user's opening message) to `call_bounds`'
    most within min(`max_turns`, 150) turns; the expected value is the geometric middle of
    that range, sqrt(max(low, 1) * high): the range spans orders of magnitude, and most
    trials end far below the longest."""
    bounds = call_bounds(task, binding, roles, options, condition)
    turns = min(options.max_turns, LONGEST_TRIAL)
    source = "paper section 4: its longest trial used 150 turns"
    ranges: dict[str, CallRange] = {}
    for part, bound in bounds.items():
        if part == EPISODE_CALLS or bound.calls is None:
            continue
        high = bound.calls if part == "judge" else bound.calls * turns // options.max_turns
        low = 1 if part in binding or part == "user" else 0  # the native user opens
        ranges[part] = CallRange(low, min(high, math.sqrt(max(low, 1) * high)), high, source)
    return ranges
