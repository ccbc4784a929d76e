"""`confide run --dry-run` prints the model calls a run may make: each
benchmark bounds them per seat and role from its options (`BenchmarkSpec.call_bounds`),
every played episode stays within its bounds, and a part without a bound says why."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from confide.cli.main import main
from confide.core.benchmark import EPISODE_CALLS, SeatSpec, expand_lineup
from confide.core.trace import ModelCall, read_trace, trace_files
from confide.registry import get_benchmark
from confide.runner import build_experiment, run_experiment
from confide.runner.resolve import resolve_experiment

MODELS = {"customer": "mock/incognita", "desk": "mock/incognita", "judge": "mock/incognita"}
RUNS: dict[str, dict[str, Any]] = {
    "calbench": {"suite": "tiny", "lineups": ["mock/json"], "conditions": ["dm"],
                 "roles": {"judge": "mock/json"}},
    "sotopia-tom": {"lineups": ["mock/json:tom-coach"], "roles": {"judge": "mock/json"}},
    "incognita": {"lineups": ["mock/incognita"], "conditions": ["social"], "roles": MODELS},
    "demo": {"lineups": ["mock/echo"]},
}


def _key(benchmark: str, call: ModelCall, seats: set[str]) -> str:
    """The seat or role a recorded call belongs to."""
    if call.seat in seats:
        return call.seat
    if benchmark == "incognita":  # the trace names the agent AGENT and the customer USER
        if call.seat == "AGENT":
            return "agent"
        if call.seat == "USER":
            return "gate" if call.purpose == "gate" else "customer"
        return "judge" if call.seat is None else "desk"
    return "judge"  # CalBench's judge-vps and Sotopia-ToM's judge-* calls


@pytest.mark.parametrize("benchmark", sorted(RUNS))
def test_every_episode_stays_within_its_bounds(benchmark: str, tmp_path: Path) -> None:
    spec = get_benchmark(benchmark)
    assert spec.call_bounds is not None
    experiment = build_experiment({"benchmark": benchmark, "limit": 1,
                                   "output_dir": str(tmp_path), **RUNS[benchmark]})
    resolved = resolve_experiment(spec, experiment)
    run_experiment(experiment, show_progress=False)
    options = spec.options.model_validate(resolved.options)
    for path in trace_files(tmp_path / "traces"):
        trace = read_trace(path)
        task = next(t for t in spec.load_tasks(resolved.suite, None)
                    if t.id == trace.header.scenario_id)
        lineup = tuple(SeatSpec(s) for s in trace.header.lineup)
        binding = expand_lineup(lineup, spec.seats(task))
        bounds = spec.call_bounds(task, binding, resolved.roles, options,
                                  trace.header.condition)
        made = Counter(_key(benchmark, c, set(binding)) for c in trace.model_calls())
        assert made, "the mock lineup makes model calls"
        for key, count in made.items():
            bound = bounds[key].calls
            assert bound is not None and count <= bound, (key, count, bound)
        together = bounds.get(EPISODE_CALLS)
        assert together is None or sum(made.values()) <= (together.calls or 0)
        if benchmark == "demo":  # one call per seat and round, exactly
            assert made == {seat: task.rounds for seat in binding}


def test_sotopia_bounds_by_hand() -> None:
    spec = get_benchmark("sotopia-tom")
    task = next(t for t in spec.load_tasks(None, None) if len(t.agents) == 3)
    names = list(spec.seats(task))
    binding = {names[0]: SeatSpec("mock/m:tom-coach"), names[1]: SeatSpec("mock/m:tom-belief"),
               names[2]: SeatSpec("reference")}
    default = spec.options.model_validate({})  # max_turns 60, one attempt, no re-ask
    bounds = spec.call_bounds(task, binding, {"judge": "mock/j"}, default, None)
    # 60 turns over 3 seats: 20 each; the coach adds a call per reply, the belief state
    # an update per reply and its first build
    # together: 60 turns of the costliest seat (2 calls), the one state build, the judge
    assert {k: b.calls for k, b in bounds.items()} == {
        names[0]: 40, names[1]: 41, "judge": 4 * 3, EPISODE_CALLS: 60 * 2 + 1 + 12}
    options = spec.options.model_validate({"leave_ends": "all", "repair_attempts": 2,
                                           "reask_invalid_recipients": True})
    bounds = spec.call_bounds(task, binding, {"judge": "reference"}, options, None)
    # "all": either seat may take all 60 turns, but the two share them
    assert {k: b.calls for k, b in bounds.items()} == {
        names[0]: 60 * 2 * 2 * 2, names[1]: (60 * 2 * 2 + 1) * 2,
        EPISODE_CALLS: 60 * 2 * 2 * 2 + 2}


@pytest.mark.parametrize(("args", "expected"), [
    (["sotopia-tom", "--lineup", "mock/json:basic", "--role", "judge=mock/json",
      "--limit", "1"],
     "expected model calls: at most 72 in all (role judge <= 12; seats <= 60;"),
    (["incognita", "--lineup", "mock/incognita", "--condition", "direct", "--limit", "1",
      "--role", "customer=mock/incognita", "--option", "max_turns=10"],
     "expected model calls: at most 70 in all (role customer <= 10; role gate <= 30; "
     "seats <= 30;"),
    # a turn's message goes to the customer or a desk: 10 * (3 + 8 * 3), not 310
    (["incognita", "--lineup", "mock/incognita", "--condition", "social", "--limit", "1",
      "--role", "customer=mock/incognita", "--role", "desk=mock/incognita",
      "--option", "max_turns=10"],
     "expected model calls: at most 270 in all (role customer <= 10; role desk <= 240; "
     "role gate <= 30; seats <= 30;"),
    # with leave_ends=all each of the 4 seats may take all 60 turns, but they share them
    (["sotopia-tom", "--lineup", "mock/json:basic", "--role", "judge=mock/json", "--limit",
      "1", "--option", "leave_ends=all"],
     "expected model calls: at most 72 in all (role judge <= 12; seats <= 240;"),
    (["calbench", "--suite", "tiny", "--lineup", "mock/json,imap,imap", "--condition", "dm",
      "--limit", "1", "--option", "max_turns_per_round=null"],
     "expected model calls: no bound in all (seats unknown (max_turns_per_round is null: "
     "cheap talk has no turn budget);"),
    (["demo", "--lineup", "mock/echo", "--limit", "1"],
     "expected model calls: at most 6 in all (seats <= 6;"),  # ring-3x2: 3 seats, 2 rounds
])
def test_dry_run_prints_the_bounds(
    args: list[str], expected: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "argv", ["confide", "run", *args, "--out", str(tmp_path / "r"),
                                      "--dry-run"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    assert expected in capsys.readouterr().out
    assert not (tmp_path / "r").exists()
