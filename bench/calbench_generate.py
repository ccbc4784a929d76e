"""CalBench generation benchmark (the CalBench paper §3, A.1 step 5).

1. Difficulty d on the same high-count tasks (5 agents, 16 slots, 5 meetings, one blocked
   errand per agent, so most errands are movable and F is in the hundreds of thousands):
   our exact counting (`feasible_fraction`) vs CP-SAT enumeration of every solution (the
   published harness's method, `count_feasible_cpsat`). Counts must be identical.
2. Seconds to generate and score (d for every candidate; oracle and greedy for the kept
   tasks) the whole canonical suite, and whether it reproduces the shipped file.
3. A scale case (N=50, T=96, M=40): generation, canonical oracle, greedy, exact d.

Times are CPU seconds of this process (the machine is shared). The last line is the
speed ratio of step 1 as `NNNNNx`.

    PYTHONPATH=src python bench/calbench_generate.py
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from confide.envs.calbench.difficulty import (
    DifficultyScore,
    DifficultyTooHardError,
    count_feasible_cpsat,
    feasible_fraction,
)
from confide.envs.calbench.generator import GeneratorConfig, generate_scenario
from confide.envs.calbench.oracle import solve_greedy, solve_oracle
from confide.envs.calbench.scenario import save_scenarios
from confide.envs.calbench.suites import build_suite, suite_path
from confide.envs.calbench.world import Calendar, Meeting

T = TypeVar("T")

HIGH_COUNT = GeneratorConfig(
    num_agents=5,
    num_slots=16,
    num_meetings=5,
    participants_per_meeting=3,
    density_choices=(0.6, 0.8, 1.0),
    blocked_errands=1,
)
HIGH_COUNT_SEEDS = (101, 202, 303)
EXACT_REPEATS = 200


def timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float]:
    """fn(*args, **kwargs) and the CPU seconds it took."""
    start = time.process_time()
    value = fn(*args, **kwargs)
    return value, time.process_time() - start


def exact_repeated(cals: Sequence[Calendar], meetings: Sequence[Meeting]) -> DifficultyScore:
    """The exact count, computed EXACT_REPEATS times (for a stable per-call time)."""
    score = feasible_fraction(cals, meetings)
    for _ in range(EXACT_REPEATS - 1):
        score = feasible_fraction(cals, meetings)
    return score


def compare_counting() -> float:
    exact_total = enum_total = 0.0
    for seed in HIGH_COUNT_SEEDS:
        sc = generate_scenario(HIGH_COUNT, seed, task_id=f"high-count-{seed}", score=False)
        cals, meetings = sc.to_calendars(), sc.to_meetings()
        exact, exact_s = timed(exact_repeated, cals, meetings)
        exact_s /= EXACT_REPEATS
        enumerated, enum_s = timed(count_feasible_cpsat, cals, meetings)
        if enumerated != exact.feasible_count:
            raise SystemExit(
                f"{sc.task_id}: exact count {exact.feasible_count} != CP-SAT {enumerated}"
            )
        exact_total += exact_s
        enum_total += enum_s
        print(
            f"{sc.task_id}: F = {enumerated} of {exact.total_count} (d = {exact.fraction:.4f}); "
            f"exact {exact_s * 1e6:.0f} us, CP-SAT enumeration {enum_s:.2f} s"
        )
    return enum_total / exact_total


def canonical_suite() -> None:
    suite, seconds = timed(build_suite, "canonical")
    shipped = suite_path("canonical").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        fresh = save_scenarios(Path(tmp) / "canonical.jsonl", suite.scenarios).read_text()
    cells = suite.summary.cells
    print(
        f"canonical suite: {len(suite.scenarios)} tasks from "
        f"{sum(c.candidates for c in cells)} candidates in {seconds:.2f} s "
        f"(matches shipped file: {'yes' if fresh == shipped else 'NO'})"
    )


def scale_case() -> None:
    for blocked in (1, 2):
        cfg = GeneratorConfig(
            num_agents=50,
            num_slots=96,
            num_meetings=40,
            participants_per_meeting=3,
            density=0.8,
            blocked_errands=blocked,
            errand_costs="balanced",
            errand_cost_level=3,
        )
        sc, gen_s = timed(generate_scenario, cfg, 2026, score=False)
        cals, meetings = sc.to_calendars(), sc.to_meetings()
        oracle, oracle_s = timed(solve_oracle, cals, meetings)
        greedy, greedy_s = timed(solve_greedy, cals, meetings)
        start = time.process_time()
        try:
            d_text = f"d = {feasible_fraction(cals, meetings).fraction:.4g}"
        except DifficultyTooHardError as exc:
            d_text = f"d refused ({exc})"
        d_s = time.process_time() - start
        total = gen_s + oracle_s + greedy_s + d_s
        print(
            f"scale N=50 T=96 M=40, {blocked} blocked errand(s)/agent: generate {gen_s:.2f} s, "
            f"oracle {oracle_s:.2f} s (cost {oracle.cost if oracle else None}), "
            f"greedy {greedy_s:.2f} s (cost {greedy.cost}), {d_text} in {d_s:.2f} s; "
            f"total {total:.2f} s"
        )


def main() -> None:
    ratio = compare_counting()
    canonical_suite()
    scale_case()
    print(f"{ratio:.0f}x")


if __name__ == "__main__":
    main()
