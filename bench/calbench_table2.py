"""The Table 2 analogue next to the paper's Table 2 (issue 14), written to
docs/calbench_table2.md.

Plays the paper configuration, the canonical suite with the four reference lineups in the
`dm` condition, into a temporary run directory (or reads the summary.csv of a run that
covered it, e.g. the README main job's `runs/calbench`, with `--run`: its results.csv),
and writes one
table: for every setting, method and column our value and the paper's. The bands are the
issue's: a Coord. cell within 6 points, any other cell within 35% of the paper's value,
or its gap put down to a named suite difference (`EXPLAINED`). Each out-of-band cell gets
our 95% bootstrap interval over tasks, its value per suite cell and what was checked
(`NOTES`, with figures this script computes, so the document is never edited by hand).
Then the frontier: IMAP at 100% / 2.00 messages, the VPS and coordination orders.
Exit status 1 when a cell is out of band and not explained.

    PYTHONPATH=src python bench/calbench_table2.py [--run runs/calbench] [--out PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.tables import number
from confide.core.trace import TraceRecorder
from confide.envs.calbench import SPEC
from confide.envs.calbench.outputs.table2 import PAPER_TABLE2, summarize
from confide.envs.calbench.suites import load_suite
from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv

COLUMNS = ("Coord.", "Excess", "Msgs.", "Fair.", "VPS")
ROW_FIELDS = {"Coord.": "success", "Excess": "excess", "Msgs.": "messages_per_meeting",
              "Fair.": "fairness", "VPS": "excess_vps"}
"""Table 2 column -> the per-seat result column it averages (outputs/table2.py)."""
METHODS = ("imap", "dsm-private", "dsm-welfare", "sdmap")
COORD_POINTS = 6.0
RELATIVE = 0.35
RESAMPLES = 2000
EXPLAINED: dict[tuple[str, str, str], str] = {}
"""(setting, method, column) -> the named suite difference that accounts for an
out-of-band gap. Empty: no gap below has one we could demonstrate."""
_EXCESS = (
    "Ruled out as the cause: tied optima (issue 14 fix 5: our Excess averages the metric "
    "over every optimal division of the oracle cost; charged against our solver's single "
    "optimum the cell is {single:.2f}) and the ranking scale (the same games with seats "
    "shown the {{1, 2, 3}} scale Excess is measured on instead of {{1, 10, 100}}: "
    "{internal:.2f})."
)
_VPS = (
    "Excess VPS is a tail statistic (belief movement above the five-slot floor of F.3): "
    "nonzero in {nonzero} of {seats} seat-games here, so a few games where one initiator "
    "proposes many slots decide it."
)
NOTES: dict[tuple[str, str, str], str] = {
    ("varied", "imap", "Excess"): _EXCESS,
    ("varied", "dsm-welfare", "Excess"): _EXCESS,
    ("uniform", "sdmap", "VPS"): _VPS,
    ("varied", "sdmap", "VPS"): _VPS,
}
"""What we checked for an unexplained gap, formatted with the figures of `evidence`."""


def dm_rows(run: Path | None) -> list[dict[str, Any]]:
    """The per-seat `dm` result rows, from `run`'s results.csv or a fresh run."""
    if run is not None:
        rows: list[dict[str, Any]] = list(read_csv(run / "results.csv"))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            experiment = build_experiment(
                {"benchmark": "calbench", "output_dir": str(Path(tmp) / "calbench"),
                 "conditions": ["dm"]}
            )
            rows = run_experiment(experiment, show_progress=False).rows
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
        return {"nonzero": sum(1 for v in vps if v > 0), "seats": len(vps)}
    return {"single": single_optimum_excess(rows), "internal": excess_ranked_internally(method)}


def single_optimum_excess(rows: list[dict[str, Any]]) -> float:
    """Excess charged against the one optimum our solver returns (Scenario.oracle) instead
    of averaged over every optimal division (attribution.py). That optimum places every
    meeting, so this is the scheduled-only Excess only where every meeting was scheduled."""
    oracle = {t.task_id: t.oracle for t in load_suite("canonical")}
    single = []
    for r in rows:
        record = oracle.get(str(r["task_id"]))
        paid = number(r.get("cost_real"))
        if record is not None and paid is not None:
            single.append(max(0.0, paid - record.per_agent_cost[int(r["agent"])]))
    return sum(single) / len(single) if single else float("nan")


def excess_ranked_internally(method: str) -> float:
    """Table 2's varied Excess of `method` when its seats are shown the internal cost scale
    {1, 2, 3} (the scale Excess is measured on) instead of {1, 10, 100}: the same games
    with an identity `cost_display`."""
    values: list[float] = []
    loop = asyncio.new_event_loop()
    for task in load_suite("canonical"):
        if task.cost_setting != "varied":
            continue
        internal = task.model_copy(update={"cost_display": {c: c for c in task.cost_display}})
        ctx = EpisodeContext(
            episode_id=task.task_id, task=internal, lineup=parse_lineup(method), seed=0,
            trace=TraceRecorder(task.task_id), model_factory=_no_models, condition="dm",
        )
        result = loop.run_until_complete(SPEC.run_episode(ctx))
        values += [v for r in result.rows if (v := number(r.get("excess"))) is not None]
    loop.close()
    return sum(values) / len(values)


def _no_models(spec: str, **_: Any) -> Any:
    raise AssertionError(f"reference protocols call no model ({spec})")


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
        "Each cell is ours / the paper's (calbench.md Table 2). Bands (issue 14): Coord. "
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
                why = EXPLAINED.get((setting, method, column))
                unexplained += why is None
                checked = NOTES.get((setting, method, column), "")
                if checked:
                    checked = " " + checked.format(**evidence(members, method, column))
                inside = "inside" if lo <= theirs <= hi else "outside"
                notes.append(
                    f"- {setting} {method} {column}: {value:.2f} vs {theirs:g}, {inside} "
                    f"our 95% interval over tasks ({lo:.2f}-{hi:.2f}); by suite cell "
                    f"(blocked errands per agent): {by_cell(members, column)}. "
                    f"{why or 'Not explained.'}{checked}"
                )
            lines.append(f"| {setting.capitalize()} | {method} | " + " | ".join(cells) + " |")
    lines += ["", "Cells marked * are outside their band:", "", *(notes or ["- none"]), ""]
    lines += [
        "## Excess and tied optima",
        "",
        "Our Excess averages the metric over every optimal division of the oracle cost "
        "(issue 14 fix 5). Charged instead against the one optimum our solver returns, for "
        "the protocols that schedule every meeting (ours averaged / single optimum / paper):",
        "",
    ]
    for setting in ("uniform", "varied"):
        for method in ("imap", "dsm-welfare"):
            members = [r for r in rows
                       if r["cost_setting"] == setting and r["participant"] == method]
            paper = PAPER_TABLE2[(setting, method)][COLUMNS.index("Excess")]
            lines.append(
                f"- {setting} {method}: {number(table[(setting, method)]['Excess']):.2f} / "
                f"{single_optimum_excess(members):.2f} / {paper:g}"
            )
    lines += ["", "## Frontier", "", *frontier(table), ""]
    return "\n".join(lines), unexplained


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
