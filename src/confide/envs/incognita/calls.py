"""How many model calls an Incognita episode may make, for `confide run --dry-run`.

The agent acts once per turn, up to `max_turns` (A.1; env.py), each turn up to
`max_attempts` calls of the repair loop. A turn sends at most one message: to the
customer (one plain call of a model customer, after at most one gate classification of
up to `max_attempts` calls) or to a desk (up to `desk_steps` steps, each up to
`max_attempts` calls). A model judge answers once for all the card's assertions, up to
`max_attempts` calls.
"""

from __future__ import annotations

from collections.abc import Mapping

from confide.core.benchmark import CallBound, SeatSpec
from confide.envs.incognita.env import ServiceTask
from confide.envs.incognita.options import EnvOptions


def call_bounds(
    task: ServiceTask,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: EnvOptions,
    condition: str | None,
) -> dict[str, CallBound]:
    """Per model seat and model-bound role, the most calls one episode makes."""
    turns, attempts = options.max_turns, options.max_attempts
    bounds = {seat: CallBound(turns * attempts) for seat, spec in binding.items()
              if spec.is_model}
    customer = roles.get("customer", "")
    if "/" in customer:
        bounds["customer"] = CallBound(turns)
    if "/" in roles.get("gate", customer):  # the gate follows the customer's model
        bounds["gate"] = CallBound(turns * attempts)
    if "/" in roles.get("desk", "") and condition != "direct":  # direct access: no desks
        bounds["desk"] = CallBound(turns * options.desk_steps * attempts)
    if "/" in roles.get("judge", ""):
        bounds["judge"] = CallBound(attempts)
    return bounds
