"""The Table 2 analogue next to the paper's Table 2, written to
docs/calbench_table2.md.

Plays the paper configuration, the canonical suite with the four reference lineups in the
`dm` condition, into a temporary run directory (or reads the results.csv of a run that
covered it, e.g. the README main job's `runs/calbench`, with `--run`), and writes one
table: for every setting, method and column our value and the paper's. The bands are the
issue's: a Coord. cell within 6 points, any other cell within 35% of the paper's value,
or its gap put down to a named suite difference. An out-of-band Excess cell is explained
when the engine/suite swap of calbench_table2_suite.py says so (the published engine on
our suite misses the band as we do, our engine on the published generator's tasks lands
in it); it needs the public fixtures and the published harness under ../shared, and
without them the cell stays unexplained. An out-of-band VPS cell is explained when the
paper's value lies within the range the cell takes on suites drawn from our canonical
suite's spec with other seeds (calbench_table2_vps.py, which also scores the published
engine's SD-MAP messages on our suite with our VPS; for the uniform SD-MAP cell, the one
it leaves unexplained, the note also lists what else was measured and ruled out: the
statistic, the labels, the communication condition, the speaker orders, the budget, the
published generator's blocked tasks and how likely a suite drawn like ours is to reach
the paper's value). Each out-of-band cell gets our 95%
bootstrap interval over tasks, its value per suite cell and what was checked (`NOTES`, with figures
this script computes, so the document is never edited by hand). Then Excess and Fair.
charged three ways (tie-independent, our single optimum, the published
harness's oracle) and which the paper matches, and the frontier: IMAP at 100% / 2.00
messages, the VPS and coordination orders. Exit status 1 when a cell is out of band and
not explained.

The published harness's oracle is solved here with one CP-SAT worker and CP-SAT's default
seed (calbench_table2_suite.PINNED): the harness's default parallel search returns
whichever tied optimum a worker reaches first, which made that column (and the Excess
notes that quote it) move by 0.01-0.02 between identical runs. The document states that
this choice moves the column, records the values the default gave, and reports the column
under 14 other deterministic settings (`SOLVERS`); everything else was already
deterministic, so two runs write the same document.

    PYTHONPATH=src python bench/calbench_table2.py [--run runs/calbench] [--out PATH]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import calbench_table2_suite as suite
import calbench_table2_vps as vps

from confide.core.tables import number
from confide.envs.calbench.attribution import excess, fairness
from confide.envs.calbench.outputs.table2 import paper_table2, summarize
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import load_suite
from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv
from confide.runner.rundir import find_run

COLUMNS = ("Coord.", "Excess", "Msgs.", "Fair.", "VPS")
PAPER_TABLE2 = paper_table2()
"""The CalBench paper, Table 2 (envs/calbench/published/table2.csv): (setting, method) ->
COLUMNS."""
ROW_FIELDS = {"Coord.": "success", "Excess": "excess", "Msgs.": "messages_per_meeting",
              "Fair.": "fairness", "VPS": "excess_vps"}
"""Table 2 column -> the per-seat result column it averages (outputs/table2.py)."""
METHODS = ("imap", "dsm-private", "dsm-welfare", "sdmap")
COORD_POINTS = 6.0
RELATIVE = 0.35
RESAMPLES = 2000
SOLVERS = (
    *(suite.CpSat(seed=seed) for seed in range(10)),
    *(suite.CpSat(workers=n, interleave=True) for n in (2, 4, 8, 16)),
)
"""Other deterministic CP-SAT settings the published oracle is also solved with, to show
how far its column moves with the solver's choice among tied optima alone: one worker
with seeds 0-9, and the interleaved portfolios of 2 to 16 workers (the deterministic form
of the parallel search the harness's default runs on a machine with that many cores)."""
SUITE_SWAP = ("Excess", "VPS")
"""Columns whose out-of-band cells get a suite check: the engine/suite swap of
calbench_table2_suite.py for Excess, the engine check and suite redraws of
calbench_table2_vps.py for VPS."""
_SWAP = (
    "The published engine on our suite gives {peer:.2f} (ours on the same {games} games, "
    "those it scheduled in full: {mine:.2f}; both engines pay the same total in {same} of "
    "them); our engine on the published generator's own "
    "5-agent, 3-participant tasks ({count} public fixture tasks, 4 sweeps) gives {pub:.2f}. "
    "Named suite difference: blocked errands, {share:.0%} of our suite's {setting} errands "
    "(2, 4 or 6 per agent, section 4.1's counts; the public tasks block none); our suite "
    "with every errand movable gives {unblocked:.2f}, so they account for part of the gap, "
    "and the rest is the draw of the tasks, not a property we isolated."
)
_EXCESS = (
    "Charged three ways (section below): against our solver's single "
    "optimum the cell is {single:.2f}; against the published harness's oracle, "
    "{published}. Not the ranking scale: the same games with seats shown the {{1, 2, 3}} "
    "scale Excess is measured on instead of {{1, 10, 100}} give {internal:.2f}."
)
_VPS = (
    "Excess VPS is a tail statistic (belief movement above the five-slot floor of F.3): "
    "nonzero in {nonzero} of {seats} seat-games here, so a few games where one initiator "
    "proposes many slots decide it; our engine on the published generator's own 5-agent, "
    "3-participant tasks gives {published}."
)
_DRAWS = (
    "The draw of the suite: our canonical suite's spec drawn with {count} other seeds "
    "gives {lo:.2f}-{hi:.2f} ({values}); the paper's value is {where} that range."
)
_SDMAP_DRAWS = (
    " Not the engine: the published engine's own SD-MAP messages on our suite, scored by "
    "our VPS, give {peer}. SD-MAP never reads a cost (D.2: binary feasibility), so its "
    "uniform and varied cells are draws of one statistic, as the paper's {other} are."
)
_RULED_OUT = (
    " Ruled out by measurement (calbench_table2_vps.py). The statistic: the paper's IMAP "
    "12.4 and DSM-Private 0 are the mean per seat-game of the excess (ours {imap[0]:.2f} "
    "and {private[0]:.2f}), not the per-game mean over observed pair-rounds ({imap[1]:.2f}, "
    "{private[1]:.2f}) nor over all pair-rounds ({imap[2]:.2f}, {private[2]:.2f}); those "
    "give SD-MAP {sdmap[1]:.2f} and {sdmap[2]:.2f}. The labels: our suite hydrated from our "
    "label bank gives {labelled:.2f} (typed messages carry none, D.4). The condition: in "
    "the participant and all-agent groupchats the cell is {conditions[0]:.2f} and "
    "{conditions[1]:.2f}, and IMAP's is {imap_conditions[0]:.1f} and "
    "{imap_conditions[1]:.1f}, so the paper's IMAP 12.4 is a dm value. The speaker orders: "
    "drawn by the published "
    "generator's balanced assignment instead of ours, the cell is {orders}. The budget: no bump "
    "repair runs ({repairs} repair messages; every meeting has 3 participants, so D.2's "
    "unit-difficulty rule bumps nothing); at 3 / 4 / 5 sweeps SD-MAP's Coord. is "
    "{coord[0]:.1f} / {coord[1]:.1f} / {coord[2]:.1f} (paper {paper_coord:g}) and its VPS "
    "{budget[0]:.2f} / {budget[1]:.2f} / {budget[2]:.2f}, so the budget that would raise "
    "VPS to the paper's takes Coord. out of its band. More blocked errands: on the tasks "
    "of our suite where every agent blocks 6, the cell is {heavy_vps:.2f} but SD-MAP "
    "schedules {heavy_coord:.1f}% of its meetings. The suite: the public 5-agent, "
    "3-participant tasks with blocked errands marked by the published generator's own "
    "derivation (2, 4, 6 per agent at density 0.6, 0.8, 1.0) give {published_blocked}; a "
    "suite of {size} tasks drawn with replacement from the tasks of our redrawn suites "
    "reaches {paper:g} in {probability} draws. What remains is a property of the paper's "
    "suite, or of the code that produced its table, that neither the text nor the "
    "published harness shows."
)
NOTES: dict[tuple[str, str, str], str] = {
    ("varied", "imap", "Excess"): _EXCESS,
    ("varied", "dsm-welfare", "Excess"): _EXCESS,
    ("uniform", "sdmap", "VPS"): _VPS + _RULED_OUT,
    ("varied", "sdmap", "VPS"): _VPS,
}
"""What we checked for an unexplained gap, formatted with the figures of `evidence`."""


def dm_rows(run: Path | None) -> list[dict[str, Any]]:
    """The per-seat `dm` result rows, from `run`'s results.csv (`runs/calbench`: its
    latest run) or a fresh run."""
    if run is not None:
        rows: list[dict[str, Any]] = list(read_csv(find_run(run) / "results.csv"))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            experiment = build_experiment(
                {"benchmark": "calbench", "output_dir": str(Path(tmp) / "calbench"),
                 "conditions": ["dm"]}
            )
            # read the spooled rows before the directory is removed
            rows = list(run_experiment(experiment, show_progress=False).rows)
    return [r for r in rows if (r.get("condition") or "dm") == "dm"]


def interval(rows: list[dict[str, Any]], column: str) -> tuple[float, float]:
    """95% percentile bootstrap interval of a Table 2 cell, resampling tasks."""
    by_task: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        value = number(r.get(ROW_FIELDS[column]))
        if value is not None:
            by_task[str(r["task_id"])].append(100.0 * value if column == "Coord." else value)
    tasks = list(by_task.values())
    rng = random.Random(0)
    means = []
    for _ in range(RESAMPLES):
        drawn = [v for _ in tasks for v in rng.choice(tasks)]
        means.append(sum(drawn) / len(drawn))
    means.sort()
    return means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def by_cell(rows: list[dict[str, Any]], column: str) -> str:
    """The cell's value per suite cell (blocked errands per agent, from the task id)."""
    groups: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        value = number(r.get(ROW_FIELDS[column]))
        if value is not None:
            groups[str(r["task_id"]).split("-")[2]].append(value)
    return ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in sorted(groups.items()))


def evidence(rows: list[dict[str, Any]], method: str, column: str) -> dict[str, Any]:
    """Figures the notes quote: Excess charged against the solver's single optimum and
    Excess with seats shown the internal scale, or how many seat-games have a nonzero
    excess VPS."""
    if column == "VPS":
        vps = [v for r in rows if (v := number(r.get("excess_vps"))) is not None]
        tasks = suite.published_tasks(str(rows[0]["cost_setting"]))
        played = "n/a" if tasks is None else (
            f"{suite.mean_of(suite.play_rows(tasks, method), 'excess_vps'):.2f}"
        )
        found = {"nonzero": sum(1 for v in vps if v > 0), "seats": len(vps),
                 "published": played}
        setting = str(rows[0]["cost_setting"])
        if "{probability}" in NOTES.get((setting, method, column), ""):
            found |= ruled_out(setting, method, rows)
        return found
    published = published_charge(rows)
    return {
        "single": single_optimum(rows)[0],
        "published": "n/a" if published is None else f"{published[0]:.2f}",
        "internal": excess_ranked_internally(method),
    }


def ruled_out(setting: str, method: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures of `_RULED_OUT`: what else could move an SD-MAP VPS cell (module docstring
    of calbench_table2_vps.py); `rows` are the cell's seat rows."""
    budgets = [vps.budget_cells(setting, turns) for turns in (3, 4, 5)]
    heavy = [r for r in rows if "-b6-" in str(r["task_id"])]
    paper = PAPER_TABLE2[(setting, method)]
    blocked = vps.published_blocked_vps(setting)
    orders = vps.reordered_vps(setting, method)
    size = len(suite.suite_tasks(setting))
    return {
        "imap": vps.vps_means(setting, "imap"),
        "private": vps.vps_means(setting, "dsm-private"),
        "sdmap": vps.vps_means(setting, method),
        "labelled": vps.labelled_vps(setting, method),
        "conditions": [vps.condition_vps(setting, method, c) for c in vps.CONDITIONS],
        "imap_conditions": [vps.condition_vps(setting, "imap", c) for c in vps.CONDITIONS],
        "orders": "n/a" if orders is None else (
            f"{min(orders):.2f}-{max(orders):.2f} over {len(orders)} draws"
        ),
        "repairs": vps.repair_messages(setting),
        "coord": [c for c, _ in budgets],
        "budget": [v for _, v in budgets],
        "paper_coord": paper[COLUMNS.index("Coord.")],
        "heavy_vps": suite.mean_of(heavy, "excess_vps"),
        "heavy_coord": 100.0 * suite.mean_of(heavy, "success"),
        "paper": paper[COLUMNS.index("VPS")],
        "published_blocked": "n/a" if blocked is None else (
            f"{blocked[0]:.2f} with our engine and {blocked[1]:.2f} with the published one "
            f"({blocked[2]} tasks)"
        ),
        "size": size,
        "probability": f"{vps.draw_hits(setting, method, paper[COLUMNS.index('VPS')])} of "
        f"{vps.BOOTSTRAP_DRAWS:,}",
    }


def single_optimum(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """(Excess, Fair.) charged against the one optimum our solver returns (Scenario.oracle,
    its lexicographic tie-break) instead of averaged over every optimal division
    (attribution.py). That optimum places every meeting, so these are the scheduled-only
    metrics only where every meeting was scheduled (the protocols this is reported for)."""
    def share(task_id: str) -> Sequence[int]:
        record = canonical_tasks()[task_id].oracle
        assert record is not None, task_id
        return record.per_agent_cost

    return charged(rows, share)


def published_charge(
    rows: list[dict[str, Any]], solver: suite.CpSat = suite.PINNED
) -> tuple[float, float] | None:
    """(Excess, Fair.) charged against the published harness's per-agent oracle, its
    CP-SAT search run with `solver` (calbench_table2_suite.published_oracle); None
    without the harness."""
    if not suite.peer_available():
        return None
    return charged(rows, lambda task_id: published_share(task_id, solver))


@cache
def published_share(task_id: str, solver: suite.CpSat) -> tuple[int, ...]:
    """The published harness's per-agent oracle of canonical task `task_id`."""
    per_agent = suite.published_oracle(canonical_tasks()[task_id], solver)
    assert per_agent is not None
    return tuple(per_agent)


@cache
def canonical_tasks() -> dict[str, Scenario]:
    return {t.task_id: t for t in load_suite("canonical")}


def charged(
    rows: list[dict[str, Any]], share: Callable[[str], Sequence[int]]
) -> tuple[float, float]:
    """Mean (Excess, Fair.) of the seats in `rows` with c^oracle = share(task id)."""
    games: dict[str, dict[int, int]] = defaultdict(dict)
    for r in rows:
        if (cost := number(r.get("cost_real"))) is not None:
            games[str(r["task_id"])][int(r["agent"])] = int(cost)
    over: list[float] = []
    spread: list[float] = []
    for task_id, by_agent in games.items():
        oracle = share(task_id)
        paid = [by_agent[a] for a in range(len(oracle))]
        over += excess(paid, oracle)
        spread += fairness(paid, oracle)
    return sum(over) / len(over), sum(spread) / len(spread)


def excess_ranked_internally(method: str) -> float:
    """Table 2's varied Excess of `method` when its seats are shown the internal cost scale
    {1, 2, 3} (the scale Excess is measured on) instead of {1, 10, 100}: the same games
    with an identity `cost_display`."""
    internal = [
        task.model_copy(update={"cost_display": {c: c for c in task.cost_display}})
        for task in suite.suite_tasks("varied")
    ]
    return suite.mean_of(suite.play_rows(internal, method), "excess")


def suite_swap(
    setting: str, method: str, members: list[dict[str, Any]], ours: float, paper: float
) -> tuple[bool, str] | None:
    """Whether an Excess gap is the suite's: the published engine on our suite misses the
    paper's band on the same side as we do, and our engine on the published generator's
    tasks lands in it. None when the published harness or fixtures are absent."""
    published = suite.published_tasks(setting)
    on_suite = suite.peer_on_suite(setting, method, members)
    if published is None or on_suite is None:
        return None
    peer, mine, games, same = on_suite
    pub = suite.mean_of(suite.play_rows(published, method), "excess")
    unblocked = suite.mean_of(
        suite.play_rows([suite.unblocked(t) for t in suite.suite_tasks(setting)], method),
        "excess",
    )
    side = (ours > paper) == (peer > paper)
    explained = side and not in_band("Excess", peer, paper) and in_band("Excess", pub, paper)
    return explained, _SWAP.format(
        peer=peer, mine=mine, games=games, same=same, count=len(published), pub=pub,
        share=suite.blocked_share(setting), setting=setting, unblocked=unblocked,
    )


def vps_draws(setting: str, method: str, ours: float, paper: float) -> tuple[bool, str]:
    """Whether a VPS gap is the draw of the suite: the paper's value lies within the range
    the cell takes on suites drawn from our canonical spec with other seeds (and, for
    SD-MAP, what the published engine's messages score on our suite)."""
    draws = vps.redrawn_vps(setting, method)
    peer = vps.peer_sdmap_vps(setting) if method == "sdmap" else None
    lo, hi = min(draws), max(draws)
    explained = lo <= paper <= hi
    text = _DRAWS.format(
        count=len(draws), lo=lo, hi=hi, values=", ".join(f"{v:.2f}" for v in draws),
        where="inside" if explained else "outside",
    )
    if method == "sdmap":
        other = "uniform" if setting == "varied" else "varied"
        text += _SDMAP_DRAWS.format(
            peer="n/a" if peer is None else f"{peer:.2f} (ours {ours:.2f})",
            other=f"{PAPER_TABLE2[(setting, method)][-1]:g} and "
            f"{PAPER_TABLE2[(other, method)][-1]:g}",
        )
    return explained, text


def verdict(why: tuple[bool, str] | None, swapped: bool) -> str:
    if why is None:
        return "Not explained" + (
            " (the published harness or fixtures are absent)." if swapped else "."
        )
    explained, text = why
    return ("Explained by the suite. " if explained else "Not explained. ") + text


def in_band(column: str, ours: float, paper: float) -> bool:
    gap = abs(ours - paper)
    if column == "Coord.":
        return gap <= COORD_POINTS
    return gap <= RELATIVE * abs(paper) if paper else gap < 1e-9


def render(rows: list[dict[str, Any]]) -> tuple[str, int]:
    """The document, and the number of unexplained out-of-band cells."""
    table = {(r["Setting"].lower(), r["Method"]): r for r in summarize(rows)
             if r["Condition"] == "dm"}
    lines = [
        "# CalBench Table 2: confide next to the paper",
        "",
        "Generated by `bench/calbench_table2.py` (do not edit by hand): the canonical suite "
        "(45 tasks per setting, section 4.1's shape, 4 cheap-talk sweeps per round, an "
        "inferred value) with each reference protocol in every seat, `dm` condition. "
        "Each cell is ours / the paper's (the CalBench paper, Table 2). Bands: Coord. "
        f"within {COORD_POINTS:g} points, other columns within {RELATIVE:.0%} of the "
        "paper's value, or the gap explained by a named difference. Regenerate with "
        "`confide run calbench` and `python bench/calbench_table2.py --run runs/calbench` "
        "(or without `--run`: it plays the `dm` games itself; the games are deterministic).",
        "",
        "| Setting | Method | " + " | ".join(COLUMNS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in COLUMNS) + " |",
    ]
    notes: list[str] = []
    unexplained = 0
    for setting in ("uniform", "varied"):
        for method in METHODS:
            row = table.get((setting, method), {})
            members = [r for r in rows
                       if r["cost_setting"] == setting and r["participant"] == method]
            cells = []
            for column, theirs in zip(COLUMNS, PAPER_TABLE2[(setting, method)], strict=True):
                value = number(row.get(column))
                if value is None:
                    cells.append(f"- / {theirs:g}")
                    unexplained += 1
                    continue
                ok = in_band(column, value, theirs)
                cells.append(f"{value:.2f} / {theirs:g}" + ("" if ok else " *"))
                if ok:
                    continue
                lo, hi = interval(members, column)
                why = None
                if column == "Excess":
                    why = suite_swap(setting, method, members, value, theirs)
                elif column == "VPS":
                    why = vps_draws(setting, method, value, theirs)
                unexplained += why is None or not why[0]
                checked = NOTES.get((setting, method, column), "")
                if checked:
                    checked = " " + checked.format(**evidence(members, method, column))
                inside = "inside" if lo <= theirs <= hi else "outside"
                notes.append(
                    f"- {setting} {method} {column}: {value:.2f} vs {theirs:g}, {inside} "
                    f"our 95% interval over tasks ({lo:.2f}-{hi:.2f}); by suite cell "
                    f"(blocked errands per agent): {by_cell(members, column)}. "
                    f"{verdict(why, column in SUITE_SWAP)}{checked}"
                )
            lines.append(f"| {setting.capitalize()} | {method} | " + " | ".join(cells) + " |")
    lines += ["", "Cells marked * are outside their band:", "", *(notes or ["- none"]), ""]
    lines += charged_three_ways(rows, table)
    lines += ["", "## Frontier", "", *frontier(table), ""]
    return "\n".join(lines), unexplained


def charged_three_ways(
    rows: list[dict[str, Any]], table: dict[tuple[str, str], dict[str, Any]]
) -> list[str]:
    """The section on Excess and Fair. under the three oracle attributions (fix 5)."""
    lines = [
        "## Excess and Fair. charged three ways",
        "",
        "*Tie-independent* (our default, the table above): each per-agent "
        "metric is averaged over every distinct optimal division of the oracle cost "
        "between agents. *Our single optimum*: charged against the one optimum our solver "
        "returns. *Published oracle*: charged against the per-agent oracle the published "
        "harness computes (its CP-SAT optimum replayed meeting by meeting on the initial "
        "calendars by its replay, which parks a displaced errand in the agent's first free "
        "slot and charges it again when a later meeting takes that slot; same games, our "
        "metrics otherwise). For the protocols "
        "that schedule every meeting, tie-independent / our single optimum / published "
        "oracle / paper:",
        "",
        "| Setting | Method | Excess | Fair. |",
        "| --- | --- | --- | --- |",
    ]
    gaps: dict[str, float] = defaultdict(float)
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for setting in ("uniform", "varied"):
        for method in ("imap", "dsm-welfare"):
            members = cells[(setting, method)] = [
                r for r in rows if r["cost_setting"] == setting and r["participant"] == method
            ]
            ours = tuple(number(table[(setting, method)][c]) or 0.0 for c in ("Excess", "Fair."))
            variants = {"tie-independent": ours, "our single optimum": single_optimum(members)}
            if (published := published_charge(members)) is not None:
                variants["published oracle"] = published
            shown = []
            for i, column in enumerate(("Excess", "Fair.")):
                paper = PAPER_TABLE2[(setting, method)][COLUMNS.index(column)]
                for name, values in variants.items():
                    gaps[name] += abs(values[i] - paper) / paper if setting == "uniform" else 0
                charges = " / ".join(f"{values[i]:.2f}" for values in variants.values())
                shown.append(f"{charges} / {paper:g}")
            lines.append(f"| {setting.capitalize()} | {method} | " + " | ".join(shown) + " |")
    best = min(gaps, key=gaps.__getitem__)
    lines += [
        "",
        "Closest to the paper's uniform cells (mean relative gap over Excess and Fair.): "
        + "; ".join(f"{name} {gap / 4:.0%}" for name, gap in gaps.items())
        + f". The paper's numbers match the {best} charge. The table above keeps the "
        "tie-independent definition: it does not depend on which tied optimum a solver "
        "returns, nor on a replay charging an errand twice.",
    ]
    if suite.peer_available():
        lines += ["", published_solvers(cells)]
    return lines


UNPINNED = {
    ("uniform", "imap"): ("0.25", "0.49-0.50"),
    ("uniform", "dsm-welfare"): ("0.28-0.29", "0.54-0.56"),
    ("varied", "imap"): ("0.45-0.47", "0.75-0.78"),
    ("varied", "dsm-welfare"): ("0.58-0.60", "0.98-0.99"),
}
"""The published oracle column (Excess, Fair.) under the harness's default solver, five
runs on 2026-12-02 (2 cores; ortools 9.15): the range each cell took. A record, not a
figure this script can recompute, since the default search is not reproducible."""


def published_solvers(cells: dict[tuple[str, str], list[dict[str, Any]]]) -> str:
    """How the published oracle column is made deterministic, and how far it moves under
    the other deterministic solver settings (`SOLVERS`)."""
    tasks = sorted({str(r["task_id"]) for members in cells.values() for r in members})
    every = (suite.PINNED, *SOLVERS)
    moved = sum(len({published_share(t, solver) for solver in every}) > 1 for t in tasks)
    gaps = []
    for solver in every:
        gap = 0.0
        for (setting, method), members in cells.items():
            charge = published_charge(members, solver)
            assert charge is not None
            if setting == "uniform":
                paper = PAPER_TABLE2[(setting, method)]
                gap += sum(abs(charge[i] - paper[COLUMNS.index(c)]) / paper[COLUMNS.index(c)]
                           for i, c in enumerate(("Excess", "Fair.")))
        gaps.append(gap / 4)
    spans = []
    for (setting, method), members in cells.items():
        charges = [published_charge(members, solver) or (0.0, 0.0) for solver in every]
        spans.append(
            f"{setting} {method} "
            + ", ".join(f"{c} {min(v[i] for v in charges):.2f}-{max(v[i] for v in charges):.2f}"
                        for i, c in enumerate(("Excess", "Fair.")))
        )
    return (
        f"The published oracle column is solved with {suite.PINNED.describe()} (CP-SAT's "
        "default seed). The published harness sets no solver parameter: its default "
        "solver runs one worker per core in parallel and returns the tied optimum "
        "whichever worker reaches first, so on tasks with tied optima that its replay "
        "splits differently between agents this column moved between identical runs (the "
        "other columns never call it). One worker makes the answer a function of the "
        "model, and keeping the default seed changes nothing else; but no deterministic "
        "setting is the harness's own answer, and this one moves the column: five runs of "
        "the default solver on a 2-core machine gave "
        + "; ".join(f"{s} {m} {e} / {f}" for (s, m), (e, f) in UNPINNED.items())
        + " (recorded before pinning, not recomputed: they vary from run to run). Across "
        f"the pinned setting and {len(SOLVERS)} other deterministic ones (one worker with "
        f"seeds {SOLVERS[0].seed}-{SOLVERS[9].seed}, and the interleaved portfolios of 2, "
        "4, 8 and 16 workers, the deterministic form of the parallel search) the published "
        f"share differs on {moved} of these {len(tasks)} tasks and the column spans "
        f"{'; '.join(spans)}; its mean relative gap to the paper's uniform cells spans "
        f"{min(gaps):.0%}-{max(gaps):.0%}."
    )

def frontier(table: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """The qualitative claims of Table 2, ours against the paper's."""
    out = []
    for setting in ("uniform", "varied"):
        imap = table[(setting, "imap")]
        out.append(
            f"- {setting}: IMAP coordination {number(imap['Coord.']):.2f}% with "
            f"{number(imap['Msgs.']):.2f} messages per meeting (paper 100% / 2.00)."
        )
        for column, word in (("VPS", "VPS"), ("Coord.", "coordination")):
            index = COLUMNS.index(column)
            mine = sorted(METHODS, key=lambda m: number(table[(setting, m)].get(column)) or 0.0)
            theirs = sorted(METHODS, key=lambda m: PAPER_TABLE2[(setting, m)][index])
            out.append(f"- {setting}: {word} from lowest: ours {', '.join(mine)}; the "
                       f"paper's {', '.join(theirs)}.")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=None, help="read this run's results.csv")
    parser.add_argument("--out", type=Path, default=Path("docs/calbench_table2.md"))
    args = parser.parse_args()
    text, unexplained = render(dm_rows(args.run))
    args.out.write_text(text, encoding="utf-8")
    print(text)
    print(f"{unexplained} unexplained out-of-band cell(s); written to {args.out}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
