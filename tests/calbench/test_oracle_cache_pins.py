"""The oracle's disk cache pinned by behaviour: a blocked errand changes the
problem, so a later process never reads an unblocked twin's optimum for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from confide.envs.calbench import oracle
from confide.envs.calbench.solvecache import CACHE_ENV
from confide.envs.calbench.world import Calendar, Errand, Meeting


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "oracle"))
    oracle._solve_cached.cache_clear()
    yield tmp_path / "oracle"
    oracle._solve_cached.cache_clear()


def _problem(blocked: bool) -> tuple[tuple[Calendar, ...], tuple[Meeting, ...]]:
    """Two agents, three slots, one meeting of both. Agent 0 holds a cost-1 errand in slot
    0, a cost-3 errand in slot 1 and nothing in slot 2; agent 1 holds a blocked errand in
    slot 2. Optimum: 1 (displace the cheap errand), or 3 when it is blocked."""
    first = Calendar(0, (Errand(1, 1, blocked=blocked), Errand(2, 3), None))
    second = Calendar(1, (None, None, Errand(3, 5, blocked=True)))
    return (first, second), (Meeting(1, (0, 1)),)


def test_a_blocked_errand_is_never_read_from_its_unblocked_twins_entry(cache: Path) -> None:
    free = oracle.solve_oracle(*_problem(blocked=False))
    assert free is not None and free.cost == 1 and free.assignments == {1: 0}
    oracle._solve_cached.cache_clear()  # a second process, same disk cache
    stuck = oracle.solve_oracle(*_problem(blocked=True))
    assert stuck is not None and stuck.cost == 3 and stuck.assignments == {1: 1}
    oracle._solve_cached.cache_clear()
    assert oracle.solve_oracle(*_problem(blocked=False)) == free  # both stay stored
    assert len(list(cache.rglob("*.json"))) == 2
