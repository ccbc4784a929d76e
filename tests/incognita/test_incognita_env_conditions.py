"""Access conditions (the Incognita paper §3.2): who holds which tool, and the seeded name
shuffle."""

from collections import Counter

import pytest

from confide.core.seeding import py_rng
from confide.envs.incognita.conditions import (
    AGENT,
    CUSTOMER,
    INDIRECT_DESK,
    SOCIAL_DESKS,
    ConditionError,
    build_condition,
)
from confide.envs.incognita.tools import SERVICE_TOOLS, Desk


def test_direct_agent_holds_all_fifteen_tools_and_no_desk_exists() -> None:
    condition = build_condition("direct", py_rng(0))
    assert condition.desks == ()
    assert condition.recipients == (CUSTOMER,)
    assert condition.tools_of(AGENT) == tuple(SERVICE_TOOLS)
    assert len(condition.tools_of(AGENT)) == 15


def test_indirect_one_declared_desk_holds_every_tool() -> None:
    condition = build_condition("indirect", py_rng(0))
    assert condition.desk_names == (INDIRECT_DESK,)
    assert set(condition.owners.values()) == {INDIRECT_DESK}
    assert condition.tools_of(AGENT) == ()
    assert condition.participants == (AGENT, CUSTOMER, INDIRECT_DESK)


def test_social_partitions_tools_by_role_with_one_holder_each() -> None:
    condition = build_condition("social", py_rng(3))
    assert condition.desk_names == SOCIAL_DESKS
    assert sorted(str(d.role) for d in condition.desks) == sorted(str(d) for d in Desk)
    owners = condition.owners
    assert set(owners) == set(SERVICE_TOOLS)
    for desk in condition.desks:
        assert set(desk.tools) == {t for t, s in SERVICE_TOOLS.items() if s.desk == desk.role}
        assert all(owners[tool] == desk.name for tool in desk.tools)
    identity = next(d for d in condition.desks if d.role == Desk.IDENTITY_LOOKUP)
    assert identity.tools == ("find_user_id_by_email", "find_user_id_by_name_zip")


def test_social_names_are_decorrelated_from_roles_across_trials() -> None:
    """Over seeds, every role lands on every name (so the list order says nothing)."""
    placements: Counter[tuple[str, str]] = Counter()
    maps = set()
    for seed in range(300):
        roles = build_condition("social", py_rng(seed, "desk-names")).role_map()
        maps.add(tuple(sorted(roles.items())))
        placements.update(roles.items())
    assert len(placements) == 36
    assert min(placements.values()) > 300 / 6 / 2
    assert len(maps) > 100
    same = build_condition("social", py_rng(7, "desk-names")).role_map()
    assert same == build_condition("social", py_rng(7, "desk-names")).role_map()


def test_unknown_condition_is_named_in_the_error() -> None:
    with pytest.raises(ConditionError, match=r"'centralized'.*direct, indirect, social"):
        build_condition("centralized", py_rng(0))
