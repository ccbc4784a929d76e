"""Is a Table 2 gap the suite's or the engine's? Evidence for bench/calbench_table2.py
("explained by a named difference in the suite").

Two swaps decide it for a cell:

- the published engine (../shared/anchors/calbench/peer, `peer_game.play`, via
  bench/calbench_peer_parity.py) on our canonical suite, scored with our metrics (the
  published engine reports per-agent costs and, without its analysis scripts, no Table 2
  Excess): if it gives our number, our engine and metrics are not the cause;
- our engine on the published generator's own tasks, the public fixtures' 5-agent,
  3-participant tasks: if that lands in the paper's band, the tasks are.

Plus the named property: the share of our suite's errands that are blocked, and our
engine on our suite with every blocked errand made movable. Everything here returns None
when the public fixtures or the published harness are absent (the cell then stays
unexplained).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from calbench_peer_parity import fixture_record, peer_costs, shared

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.tables import number
from confide.core.trace import TraceRecorder
from confide.envs.calbench import SPEC
from confide.envs.calbench.attribution import excess_shares, optimal_divisions
from confide.envs.calbench.scenario import ErrandSlot, Scenario
from confide.envs.calbench.suites import PAPER_MAX_TURNS, load_suite


def play_rows(tasks: list[Scenario], method: str, condition: str = "dm") -> list[dict[str, Any]]:
    """Our engine's per-seat result rows for `method` in every seat of `tasks`, under the
    communication `condition`."""
    rows: list[dict[str, Any]] = []
    loop = asyncio.new_event_loop()
    for task in tasks:
        ctx = EpisodeContext(
            episode_id=task.task_id, task=task, lineup=parse_lineup(method), seed=0,
            trace=TraceRecorder(task.task_id), model_factory=_no_models, condition=condition,
        )
        rows += loop.run_until_complete(SPEC.run_episode(ctx)).rows
    loop.close()
    return rows


def _no_models(spec: str, **_: Any) -> Any:
    raise AssertionError(f"reference protocols call no model ({spec})")


def mean_of(rows: list[dict[str, Any]], field: str) -> float:
    values = [v for r in rows if (v := number(r.get(field))) is not None]
    return sum(values) / len(values) if values else float("nan")


def suite_tasks(setting: str) -> list[Scenario]:
    return [t for t in load_suite("canonical") if t.cost_setting == setting]


def peer_available() -> bool:
    """Whether the published harness and fixtures are here; puts the harness on the path."""
    root = shared()
    if not ((root / "peer" / "peer_game.py").exists() and (root / "tasks").is_dir()):
        return False
    if str(root / "peer") not in sys.path:
        sys.path.insert(0, str(root / "peer"))
    return True


def peer_on_suite(
    setting: str, method: str, ours: list[dict[str, Any]]
) -> tuple[float, float, int, int] | None:
    """The published engine's Excess on our suite's `setting` tasks (our metric: mean over
    tied optima) and ours, both over the games where it scheduled every meeting (the
    per-agent costs it reports do not say which meetings a partial game scheduled); the
    number of those games, and of those where both engines paid the same total."""
    if not peer_available():
        return None
    theirs: list[float] = []
    kept: set[str] = set()
    same = 0
    for task in suite_tasks(setting):
        scheduled, paid = peer_costs(fixture_record(task), method, PAPER_MAX_TURNS)
        if scheduled < len(task.meetings):
            continue
        divisions = optimal_divisions(task.to_calendars(), task.to_meetings())
        assert divisions is not None, task.task_id
        theirs += excess_shares(paid, divisions)
        kept.add(task.task_id)
        same += sum(paid) == sum(
            int(r["cost_real"]) for r in ours if r["task_id"] == task.task_id
        )
    mine = [r for r in ours if r["task_id"] in kept]
    return sum(theirs) / len(theirs), mean_of(mine, "excess"), len(kept), same


def published_tasks(setting: str) -> list[Scenario] | None:
    """The public fixtures' 5-agent, 3-participant `setting` tasks (the published
    generator's suite shape of section 4.1, without blocked errands), with the paper
    configuration's cheap-talk budget."""
    path = shared() / "tasks" / f"{setting}_full.jsonl"
    if not path.exists():
        return None
    return [
        t.model_copy(update={"max_turns_per_round": PAPER_MAX_TURNS})
        for t in SPEC.load_tasks(None, str(path))
        if t.num_agents == 5 and all(len(m.participants) == 3 for m in t.meetings)
    ]


def unblocked(task: Scenario) -> Scenario:
    """`task` with every blocked errand movable (same cost); the stored oracle is dropped
    (the metrics solve their own)."""
    calendars = tuple(
        tuple(
            item.model_copy(update={"blocked": False}) if isinstance(item, ErrandSlot) else item
            for item in row
        )
        for row in task.calendars
    )
    return task.model_copy(update={"calendars": calendars, "oracle": None})


def blocked_share(setting: str) -> float:
    """The fraction of our suite's `setting` errands that are blocked."""
    errands = [
        item for t in suite_tasks(setting) for row in t.calendars for item in row
        if isinstance(item, ErrandSlot)
    ]
    return sum(1 for e in errands if e.blocked) / len(errands)


class CpSat(NamedTuple):
    """The CP-SAT parameters the published oracle is solved with here (`pinned_solver`).
    The harness builds a default `CpSolver`: a parallel portfolio with one worker per
    core that returns the tied optimum whichever worker reaches first, so the optimum it
    returns, and the per-agent share its replay charges, changed from run to run (on 2
    cores, the share of 5 of the 90 canonical tasks over six runs)."""

    workers: int = 1
    seed: int = 1
    """CP-SAT's own default `random_seed`."""
    interleave: bool = False
    """CP-SAT's `interleave_search`: the portfolio of `workers` subsolvers run in a
    deterministic interleaving instead of in parallel."""

    def describe(self) -> str:
        if self.interleave:
            return f"the interleaved portfolio of {self.workers} workers"
        return f"{self.workers} worker{'s' * (self.workers > 1)}, seed {self.seed}"


PINNED = CpSat()
"""One worker and CP-SAT's default seed: the search is then a function of the model (no
race between workers, no time limit: the harness sets none), and nothing else departs
from the harness's defaults. Any deterministic setting is a choice among tied optima;
calbench_table2.py reports how far the others move the charge."""


def published_oracle(task: Scenario, setting: CpSat = PINNED) -> list[int] | None:
    """The per-agent oracle share the published harness charges on `task` (internal
    scale): its CP-SAT optimum (costs on its fixture scale, solved with `setting`),
    replayed meeting by meeting on the initial calendars by its own replay, which puts a
    displaced errand in the agent's first free slot; when a later meeting of the optimum
    takes that slot the errand is displaced, and charged, again, so the shares can total
    more than the optimum. None when the harness is absent."""
    if not peer_available():
        return None
    import peer_game  # type: ignore[import-not-found]  # noqa: F401  (puts its engine on the path)
    from calendar_game import solver  # type: ignore[import-not-found]

    record = fixture_record(task)
    with pinned_solver(solver, setting):
        solved = solver.solve_optimal(record["calendars"], record["meetings"], task.num_slots)
    internal = fixture_record(task, scaled=False)
    _, per_agent = solver.cost_by_agent_for_assignments(
        internal["calendars"], internal["meetings"], solved["assignments"]
    )
    return [int(c) for c in per_agent]


@contextmanager
def pinned_solver(module: Any, setting: CpSat) -> Iterator[None]:
    """Inside the block, every `CpSolver` that `module` (the published solver module, left
    unchanged on disk) builds searches with `setting`; everything else it reads from
    `cp_model` is as before, and our own oracle's CP-SAT (oracle.py) is not touched."""
    original = module.cp_model

    class Pinned:
        def __getattr__(self, name: str) -> Any:
            return getattr(original, name)

        @staticmethod
        def CpSolver() -> Any:  # the name the harness calls
            solver = original.CpSolver()
            solver.parameters.num_workers = setting.workers
            solver.parameters.random_seed = setting.seed
            solver.parameters.interleave_search = setting.interleave
            return solver

    module.cp_model = Pinned()
    try:
        yield
    finally:
        module.cp_model = original
