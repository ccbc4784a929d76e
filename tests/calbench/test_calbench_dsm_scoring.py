"""DSM arithmetic (the CalBench paper §D.3, Table 9): satisfaction levels, scoring cost, reward,
offer-size utility and the offer sizes the two presets choose, checked against values
computed by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confide.envs.calbench.participants.dsm import DSM_PRIVATE, DSM_WELFARE
from confide.envs.calbench.participants.dsm_scoring import (
    D_LEVELS,
    OfferPolicy,
    availability,
    best_utility,
    joint_acceptance,
    offer_size,
    reward,
    satisfaction,
    scoring_cost,
    utility,
)


def test_table9_presets() -> None:
    w, p = DSM_WELFARE, DSM_PRIVATE
    assert (w.policy.l_min, w.policy.l_max, w.policy.beta, w.policy.theta, w.policy.w_soc) == (
        1, 12, 1.0, 0.0, 1.0
    )
    assert (w.cascade_depth, w.displacement_targets, w.exhaustive) == (2, 4, True)
    assert (p.policy.l_min, p.policy.l_max, p.policy.beta, p.policy.theta, p.policy.w_soc) == (
        1, 2, 0.25, 10.0, 0.25
    )
    assert (p.cascade_depth, p.displacement_targets, p.exhaustive) == (1, 2, False)
    assert D_LEVELS == 12


def test_levels_fall_one_per_unit_of_shown_cost() -> None:
    """s = max(1, D-1-c) over the summed shown cost c (the published engine's mapping):
    a uniform-cost item drops one level, a shown 10 or 100 drops to the floor 1."""
    assert satisfaction([]) == 11  # nothing to move
    assert satisfaction([1]) == 10  # one uniform-cost errand (or one meeting copy)
    assert satisfaction([1, 1, 1]) == 8
    assert satisfaction([10]) == 1 and satisfaction([100]) == 1
    assert satisfaction([9]) == 2
    assert satisfaction([1] * 30) == 1  # never below 1 while feasible
    assert satisfaction(None) == 0
    with pytest.raises(ValueError, match="costs must be >= 0"):
        satisfaction([-1])


def test_scoring_cost_and_reward() -> None:
    assert [scoring_cost(s) for s in (0, 1, 10, 11)] == [0, 10, 1, 0]
    assert availability([0, 10, 11, 0]) == 2
    # R = (D-1-s*) + max(0, min(A, L) - 1)
    assert reward(10, [10, 0, 11], 3) == 1 + 1
    assert reward(11, [11], 1) == 0
    assert reward(9, [0, 0, 10, 9], 4) == 2 + 1
    with pytest.raises(ValueError, match="never selected"):
        reward(0, [0], 1)
    with pytest.raises(ValueError, match="not a satisfaction level"):
        scoring_cost(12)


def test_utility_by_hand() -> None:
    w = DSM_WELFARE.policy
    # p = 0.5, own values [1, 1, 10/11]
    assert utility(w, 0.5, [1.0]) == pytest.approx(0.5)
    assert utility(w, 0.5, [1.0, 1.0]) == pytest.approx(1.25)
    assert utility(w, 0.5, [1.0, 1.0, 10 / 11]) == pytest.approx(0.875 * (32 / 33) + 0.75)
    assert offer_size(w, 0.5, [1.0, 1.0, 10 / 11]) == 3
    # p = 0.25, own values [1, 10/11, 10/11, 9/11]: U = -0.25, 0.2926, 0.6993, 0.9886
    values = [1.0, 10 / 11, 10 / 11, 9 / 11]
    us = [utility(w, 0.25, values[:n]) for n in range(1, 5)]
    assert us == pytest.approx([-0.25, 0.292614, 0.699337, 0.988636], abs=1e-6)
    assert offer_size(w, 0.25, values) == 4
    pr = DSM_PRIVATE.policy
    assert utility(pr, 0.5, [1.0]) == pytest.approx(-9.5)
    assert utility(pr, 0.5, [1.0, 1.0]) == pytest.approx(-19.125)
    assert offer_size(pr, 0.5, [1.0, 1.0, 10 / 11]) == 1
    assert best_utility(pr, 0.25, values) < 0
    assert offer_size(w, 0.5, []) == 0 and best_utility(w, 0.5, []) == -math.inf


def test_joint_acceptance_is_clipped() -> None:
    assert joint_acceptance(0.5, 1) == 0.5
    assert joint_acceptance(0.5, 2) == 0.25
    assert joint_acceptance(0.0, 2) == 0.01
    assert joint_acceptance(1.0, 1) == 0.99
    with pytest.raises(ValueError, match="own_fraction"):
        joint_acceptance(1.5, 1)


def test_policy_validation() -> None:
    with pytest.raises(ValueError, match="L_min <= L_max"):
        OfferPolicy(l_min=3, l_max=2, beta=1, theta=0, w_soc=1)
    with pytest.raises(ValueError, match="theta must be >= 0"):
        OfferPolicy(l_min=1, l_max=2, beta=1, theta=-1, w_soc=1)


@given(
    p=st.floats(0.01, 0.99),
    values=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=16),
)
def test_offer_size_is_an_argmax_within_bounds(p: float, values: list[float]) -> None:
    for policy in (DSM_WELFARE.policy, DSM_PRIVATE.policy):
        size = offer_size(policy, p, values)
        low, high = min(policy.l_min, len(values)), min(policy.l_max, len(values))
        assert low <= size <= high
        chosen = utility(policy, p, values[:size])
        assert all(chosen >= utility(policy, p, values[:n]) - 1e-9 for n in range(low, high + 1))


@given(st.lists(st.integers(0, 11), min_size=1, max_size=12))
def test_private_always_offers_one(levels: list[int]) -> None:
    values = [v / 11 for v in levels]
    assert offer_size(DSM_PRIVATE.policy, 0.99, values) == 1
