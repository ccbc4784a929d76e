"""DSM scoring arithmetic: satisfaction levels, scoring cost, aggregate statistics, the
flexibility-adjusted reward and the offer-size utility (the CalBench paper §D.3, Table 9;
Farhadi and Jennings 2021).

Everything here is a pure function of numbers; `dsm.py` wires it into a seat.

- Satisfaction levels s in {0, ..., D-1}, D = 12 (D.3): 0 = the plan is infeasible for
  the scorer, D-1 = feasible with nothing to move, and in between the level falls with the
  displacement the plan costs the scorer: s = max(1, D-1 - c), where c sums the shown
  costs of the items the scorer would move.
- Scoring cost C(s) = D - s - 1 for s > 0, else 0 (D.3).
- Aggregate statistic of a score vector (D.3): availability A = number of non-zero
  scores (offers the scorer can accept).
- Flexibility-adjusted reward to a selected responder (D.3):
  R = (D - 1 - s*) + max(0, min(A, L) - 1), s* = its score for the chosen plan, L = size
  of the offer set it scored.
- Offer-size utility (D.3): U(L) = p_succ(L) v(L) + w_soc p_succ(L) - theta c_priv L -
  beta (1 - p_succ(L)), with p_succ(L) = 1 - (1 - p)^L for a per-offer joint acceptance
  probability p, and v(L) the mean normalized own satisfaction s/(D-1) of the first L
  offers in the initiator's order. The chosen L maximizes U over [L_min, L_max] (capped
  by the offers left); ties go to the smaller L (less disclosure).

Choices the text does not decide (D.3 requires only that "intermediate levels decrease
monotonically with displacement cost", and gives U(L) without saying how p_succ or
c_priv are obtained): the level falls by one per unit of shown cost, as in the published
engine (this replaced an earlier log-scale drop of 1/2/3 levels for shown 1/10/100; see
dsm_plans.py for the agreement this bought), so a uniform-cost item drops one level and
a shown 10 or 100 reaches the floor 1: the protocol then prefers moving up to nine cheap
items over one expensive one; a "successful" offer set is one that
contains an offer every responder can take at full satisfaction (nothing to move), and p
is estimated by the initiator from its own calendar only: the fraction f of its slots
that are free, taken as typical of every responder, p = f^R for R responders, clipped to
[0.01, 0.99]; c_priv defaults to 1 (one slot of disclosure per offer).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

D_LEVELS = 12
"""Number of satisfaction levels D (D.3)."""

_P_MIN, _P_MAX = 0.01, 0.99


def satisfaction(item_costs: Iterable[int] | None, levels: int = D_LEVELS) -> int:
    """The level of a plan that moves items of these shown costs; None = infeasible -> 0."""
    if item_costs is None:
        return 0
    costs = tuple(item_costs)
    if costs and min(costs) < 0:
        raise ValueError(f"satisfaction: costs must be >= 0, got {list(costs)}")
    return max(1, levels - 1 - sum(costs))


def scoring_cost(score: int, levels: int = D_LEVELS) -> int:
    """C(s) = D - s - 1 for a non-zero score, 0 for an infeasibility report (D.3)."""
    _check_score(score, levels)
    return 0 if score == 0 else levels - score - 1


def availability(scores: Iterable[int]) -> int:
    """A: how many offers the scorer can accept."""
    return sum(1 for s in scores if s > 0)


def reward(selected: int, scores: Sequence[int], offer_size: int, levels: int = D_LEVELS) -> int:
    """R = (D - 1 - s*) + max(0, min(A, L) - 1) for a responder whose score was selected."""
    _check_score(selected, levels)
    if selected == 0:
        raise ValueError("reward: an infeasible score (0) is never selected")
    return (levels - 1 - selected) + max(0, min(availability(scores), offer_size) - 1)


def _check_score(score: int, levels: int) -> None:
    if type(score) is not int or not 0 <= score < levels:
        raise ValueError(f"score {score!r} is not a satisfaction level in [0, {levels})")


SCORING_COSTS: tuple[int, ...] = tuple(scoring_cost(s) for s in range(D_LEVELS))
"""C(s) by level s of D_LEVELS, for the hot path (a seat's scores are levels already)."""


@dataclass(frozen=True)
class OfferPolicy:
    """The Table 9 knobs of the offer-size choice."""

    l_min: int
    l_max: int
    beta: float
    theta: float
    w_soc: float
    c_priv: float = 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.l_min <= self.l_max:
            raise ValueError(
                f"offer sizes need 1 <= L_min <= L_max, got {self.l_min}, {self.l_max}"
            )
        for name in ("beta", "theta", "w_soc", "c_priv"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


def joint_acceptance(own_fraction: float, responders: int) -> float:
    """p: the chance one offer suits every responder, from the initiator's own free-slot
    fraction (module docstring)."""
    if not 0.0 <= own_fraction <= 1.0:
        raise ValueError(f"own_fraction must be in [0, 1], got {own_fraction}")
    return min(_P_MAX, max(_P_MIN, own_fraction ** max(responders, 1)))


def utility(policy: OfferPolicy, p: float, own_values: Sequence[float]) -> float:
    """U(L) for L = len(own_values) (normalized own satisfaction of the offers)."""
    size = len(own_values)
    if size == 0:
        raise ValueError("utility: an offer set needs at least one offer")
    success = 1.0 - (1.0 - p) ** size
    mean_value = sum(own_values) / size
    return (
        success * mean_value
        + policy.w_soc * success
        - policy.theta * policy.c_priv * size
        - policy.beta * (1.0 - success)
    )


def offer_size(policy: OfferPolicy, p: float, ordered_values: Sequence[float]) -> int:
    """The L in [L_min, L_max] (at most the offers left) that maximizes U(L); 0 when no
    offer is left. `ordered_values` are the remaining offers' normalized own values in the
    order they would be offered."""
    left = len(ordered_values)
    if left == 0:
        return 0
    low, high = min(policy.l_min, left), min(policy.l_max, left)
    best, best_u = low, -math.inf
    for size in range(low, high + 1):
        u = utility(policy, p, ordered_values[:size])
        if u > best_u + 1e-12:
            best, best_u = size, u
    return best


def best_utility(policy: OfferPolicy, p: float, ordered_values: Sequence[float]) -> float:
    """max_L U(L) over the allowed sizes (-inf when no offer is left)."""
    size = offer_size(policy, p, ordered_values)
    return -math.inf if size == 0 else utility(policy, p, ordered_values[:size])
