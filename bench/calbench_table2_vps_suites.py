"""Table 2's uniform SD-MAP VPS on suites built other ways section 4.1's text allows
(evidence for the note of bench/calbench_table2.py, run on its own: ~4 minutes).

Section 4.1 says "per-agent calendar density sampled from {0.6, 0.8, 1.0} and
blocked-errand counts from {2, 4, 6}" and no more. Our canonical suite draws each agent's
density and gives every agent of a task one blocked count (a suite cell per count). Other
readings, each drawn with `SEEDS` seeds (45 uniform tasks, 4 sweeps, SD-MAP in every seat):

- `per-agent-blocked`: each agent's blocked count drawn on its own;
- `shared-density`: one density and one blocked count per task, both drawn (the published
  generator's tasks share one density);
- `coupled`: each agent's blocked count tied to its density (2, 4, 6 at 0.6, 0.8, 1.0, as
  the published generator's blocked-task derivation scales them);
- `canonical`: our spec itself with the same seeds, the baseline.

Prints, per construction, the cell on every seed, and its range and mean (the paper: 0.12).

    PYTHONPATH=src:bench python bench/calbench_table2_vps_suites.py
"""

from __future__ import annotations

import random
from collections.abc import Callable

from calbench_table2_vps import mean_excess_vps

from confide.envs.calbench.generator import CellSpec, SuiteSpec, generate_suite
from confide.envs.calbench.suites import PAPER_MAX_TURNS, SUITE_SPECS

SEEDS = tuple(range(1, 21))
COUNTS = (2, 4, 6)
DENSITIES = (0.6, 0.8, 1.0)
BLOCKED_AT = dict(zip(DENSITIES, COUNTS, strict=True))
UNIFORM = [c for c in SUITE_SPECS["canonical"].cells if c.name.startswith("uniform")]
BASE = UNIFORM[0].config


def _spec(seed: int, cells: list[CellSpec], per_bucket: int, candidates: int) -> SuiteSpec:
    return SuiteSpec(name="variant", seed=seed, cells=tuple(cells),
                     candidates_per_cell=candidates, selected_per_bucket=per_bucket,
                     max_turns_per_round=PAPER_MAX_TURNS)


def per_agent_blocked(seed: int) -> SuiteSpec:
    rng = random.Random(seed)
    cells = [CellSpec(name=f"c{i}", config=BASE.model_copy(update={
        "blocked_errands": tuple(rng.choice(COUNTS) for _ in range(BASE.num_agents))}))
        for i in range(15)]
    return _spec(seed, cells, 1, 12)


def shared_density(seed: int) -> SuiteSpec:
    rng = random.Random(seed)
    cells = [CellSpec(name=f"c{i}", config=BASE.model_copy(update={
        "density": rng.choice(DENSITIES), "density_choices": None,
        "blocked_errands": rng.choice(COUNTS)}))
        for i in range(15)]
    return _spec(seed, cells, 1, 12)


def coupled(seed: int) -> SuiteSpec:
    rng = random.Random(seed)
    cells = []
    for i in range(15):
        density = tuple(rng.choice(DENSITIES) for _ in range(BASE.num_agents))
        cells.append(CellSpec(name=f"c{i}", config=BASE.model_copy(update={
            "density": density, "density_choices": None,
            "blocked_errands": tuple(BLOCKED_AT[d] for d in density)})))
    return _spec(seed, cells, 1, 12)


def canonical(seed: int) -> SuiteSpec:
    return _spec(seed, UNIFORM, 5, 60)


CONSTRUCTIONS: dict[str, Callable[[int], SuiteSpec]] = {
    "per-agent-blocked": per_agent_blocked, "shared-density": shared_density,
    "coupled": coupled, "canonical": canonical,
}


def main() -> None:
    for name, build in CONSTRUCTIONS.items():
        cells = [mean_excess_vps(list(generate_suite(build(seed)).scenarios), "sdmap")
                 for seed in SEEDS]
        print(f"{name}: {min(cells):.2f}-{max(cells):.2f}, mean {sum(cells) / len(cells):.3f} "
              f"({', '.join(f'{v:.2f}' for v in cells)})", flush=True)


if __name__ == "__main__":
    main()
