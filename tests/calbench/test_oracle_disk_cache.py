"""The oracle's disk cache (envs/calbench/solvecache.py): a later
process reads what an earlier one solved, keyed by the problem and the solver's version,
written atomically, safe with concurrent writers, and never trusted past its key."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from confide.envs.calbench import oracle, solvecache
from confide.envs.calbench.env import DEFAULT_LABEL_BANK
from confide.envs.calbench.solvecache import CACHE_ENV, DiskCache, cache_root, problem_text
from confide.envs.calbench.suites import load_suite
from confide.envs.calbench.world import Calendar, Errand, Meeting


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "oracle"))
    oracle._solve_cached.cache_clear()
    yield tmp_path / "oracle"
    oracle._solve_cached.cache_clear()


def _problem() -> tuple[tuple[Calendar, ...], tuple[Meeting, ...]]:
    task = load_suite("tiny")[0]
    return tuple(task.to_calendars()), tuple(task.to_meetings())


def _entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


def test_a_later_process_reads_the_solution(cache: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    calendars, meetings = _problem()
    solved = oracle.solve_oracle(calendars, meetings)
    assert solved is not None
    [entry] = _entries(cache)
    assert entry.parent.parent.name.startswith(f"solution-{oracle.SOLVER_VERSION}-")
    oracle._solve_cached.cache_clear()  # as a new process

    def no_search(*args: object) -> None:
        raise AssertionError("solved again")

    monkeypatch.setattr(oracle, "_solve", no_search)
    again = oracle.solve_oracle(calendars, meetings)
    assert again == solved and list(again.assignments) == list(solved.assignments)


def test_the_key_is_what_the_solver_reads(cache: Path) -> None:
    calendars, meetings = _problem()
    hydrated = load_suite("tiny", label_bank=DEFAULT_LABEL_BANK)[0]
    # labels are not part of the problem; costs are
    assert problem_text(calendars, meetings) == problem_text(
        hydrated.to_calendars(), hydrated.to_meetings())
    first = calendars[0]
    k = next(i for i, item in enumerate(first.slots) if isinstance(item, Errand))
    errand = first.slots[k]
    assert isinstance(errand, Errand)
    dearer = Calendar(0, (*first.slots[:k], Errand(errand.errand_id, errand.cost + 1),
                          *first.slots[k + 1:]))
    assert problem_text((dearer, *calendars[1:]), meetings) != problem_text(calendars, meetings)
    oracle.solve_oracle(calendars, meetings)
    oracle.solve_oracle((dearer, *calendars[1:]), meetings)
    oracle.solve_oracle(calendars, meetings, canonical=False)
    assert len(_entries(cache)) == 3


def test_another_version_or_source_reads_nothing_old(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    source = tmp_path / "solver.py"
    source.write_text("v1")
    calls: list[str] = []

    def disk(version: str) -> DiskCache[int]:
        return DiskCache("t", version, str(source), int, int)

    def solver(name: str, value: int) -> Callable[[], int]:
        def solve() -> int:
            calls.append(name)
            return value
        return solve

    assert disk("1").get_or_compute("p", solver("a", 1)) == 1
    assert disk("1").get_or_compute("p", solver("b", 2)) == 1
    assert disk("2").get_or_compute("p", solver("c", 3)) == 3
    source.write_text("v2")  # an edited solver (the source hash is read once per process)
    solvecache.source_version.cache_clear()
    assert disk("1").get_or_compute("p", solver("d", 4)) == 4
    assert calls == ["a", "c", "d"]


def test_bad_entries_are_misses_and_are_rewritten(cache: Path) -> None:
    calendars, meetings = _problem()
    solved = oracle.solve_oracle(calendars, meetings)
    [entry] = _entries(cache)
    for bad in (b"{not json", json.dumps({"key": "other", "value": None}).encode(),
                json.dumps({"key": entry.stem, "value": [1]}).encode()):
        entry.write_bytes(bad)
        oracle._solve_cached.cache_clear()
        assert oracle.solve_oracle(calendars, meetings) == solved
        assert json.loads(entry.read_bytes())["key"] == entry.stem


def test_infeasible_is_cached_and_an_unwritable_cache_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    blocked = Calendar(0, (Errand(1, 1, blocked=True),))
    other = Calendar(1, (Errand(2, 1, blocked=True),))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    oracle._solve_cached.cache_clear()
    assert oracle.solve_oracle((blocked, other), [Meeting(1, (0, 1))]) is None
    [entry] = _entries(tmp_path / "c")
    assert json.loads(entry.read_bytes())["value"] is None
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "file"))  # a file where a folder must go
    oracle._solve_cached.cache_clear()
    calendars, meetings = _problem()
    assert oracle.solve_oracle(calendars, meetings) is not None
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_root() is None
    oracle._solve_cached.cache_clear()


def test_concurrent_writers_leave_one_whole_entry(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    disk: DiskCache[list[int]] = DiskCache("t", "1", __file__, list, list)
    results: list[list[int]] = []

    def work() -> None:
        results.append(disk.get_or_compute("shared", lambda: list(range(1000))))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [list(range(1000))] * 8
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 1 and json.loads(files[0].read_bytes())["value"] == list(range(1000))


def test_default_location_is_the_user_cache_dir(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert cache_root() == tmp_path / "confide" / "oracle"
        monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # not a valid XDG value
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert cache_root() == tmp_path / "home" / ".cache" / "confide" / "oracle"
