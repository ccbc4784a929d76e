"""Incognita's benchmark outputs for a run directory (the `BenchmarkSpec.write_outputs` hook).

`write_incognita_outputs(run_dir, traces)` reads every complete trace against the frozen
coordination reference, writes one analysis row per trial (``incognita_trials.csv``), the
tables behind Figures 2, 3 and 6 and Tables 1-2 as CSV files in the run directory, and their
renderings as PNGs under ``figures/``, where `confide.report.build_report` embeds them.

A table that cannot be computed from the run (Table 1 and Table 2 need at least two models
sharing two tasks; Table 1 needs both the indirect and the social condition) writes neither
a CSV nor a figure. The analyses of section 6.1 and appendices B.1-B.2 (`analyses`) are
written as ``analysis_*.csv`` with a PNG each; ``analyses.csv`` lists every one with its
paper section and either its files or the reason the run cannot support it (a run of one
model computes none), so the report says so rather than leaving them out silently.
Models appear in the order of the run's lineups (the paper's release order when the
experiment lists them so).

Wiring: ``SPEC = BenchmarkSpec(..., write_outputs=write_outputs)``; importing this
module is cheap (the statistics and plotting modules load on first use).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from confide.core.tables import write_table
from confide.core.trace import Trace
from confide.envs.incognita.env import load_source_tasks
from confide.envs.incognita.golden import build_task_reference
from confide.envs.incognita.outputs.trials import (
    TRIALS_FILE,
    TrialRow,
    trial_rows,
    write_trials,
)
from confide.envs.incognita.reference import CoordinationReference, assemble, load_reference

FIGURES_DIR = "figures"
EXPERIMENT_FILE = "experiment.yaml"


def _experiment(run_dir: Path) -> dict[str, Any]:
    """The run's resolved ``experiment.yaml`` as a mapping (empty when there is none)."""
    path = run_dir / EXPERIMENT_FILE
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    return data if isinstance(data, dict) else {}


def source_files(run_dir: Path) -> tuple[str, str] | None:
    """The (task file, world) of a run over a source benchmark's tasks (``--tasks F
    --world W``, as its ``experiment.yaml`` records them), or None."""
    data = _experiment(run_dir)
    tasks, world = data.get("tasks"), data.get("world")
    return (str(tasks), str(world)) if tasks is not None and world is not None else None


def in_lineup_order(rows: Sequence[TrialRow], run_dir: Path) -> list[TrialRow]:
    """`rows` stably sorted so models first appear in the order of the run's lineups (the
    resolved ``experiment.yaml``), which every table and figure then follows; models not
    listed there keep their order after the listed ones."""
    listed = _experiment(run_dir).get("lineups")
    lineups = [str(item) for item in listed] if isinstance(listed, list) else []
    rank = {model: index for index, model in enumerate(lineups)}
    return sorted(rows, key=lambda row: rank.get(row.model, len(rank)))


def write_analysis(run_dir: Path | str, rows: Sequence[TrialRow]) -> list[Path]:
    """Tables (CSV) and figures (PNG) from trial rows; returns the files written."""
    # scipy and matplotlib load only when a run is analysed, not when the benchmark's
    # spec (which names this module's hook) is imported.
    from confide.envs.incognita.outputs import figures, tables

    root = Path(run_dir)
    root.mkdir(parents=True, exist_ok=True)
    plots = root / FIGURES_DIR
    success = tables.success_table(rows)
    differences = tables.neighbour_differences(rows)
    outcomes = tables.outcome_table(rows)
    processes = tables.process_table(rows)
    interactions = tables.interaction_table(rows)
    corpus = tables.corpus_size_table(rows)
    costs = tables.cost_table(rows)
    csvs = {
        "figure2_success.csv": success,
        "figure2_paired_differences.csv": differences,
        "figure3_outcomes.csv": outcomes,
        "figure3_processes.csv": processes,
        "figure6_cost.csv": costs,
        "table1_interactions.csv": interactions,
        "table2_corpus_size.csv": corpus,
    }
    written = [write_table(root / name, data) for name, data in csvs.items() if data]
    written += [
        figures.figure2(success, differences, plots / "figure2_success.png"),
        figures.figure3(outcomes, processes, plots / "figure3_outcomes_processes.png"),
        figures.figure6(costs, plots / "figure6_cost.png"),
    ]
    # Tables 1-2 are drawn only when the run can compute them (an empty one would be an
    # image with no data); the report shows every table as HTML from its CSV anyway
    if interactions:
        written.append(figures.table1_figure(interactions, plots / "table1_interactions.png"))
    if corpus:
        written.append(figures.table2_figure(corpus, plots / "table2_corpus_size.png"))
    return written + write_paper_analyses(root, rows)


ANALYSES: tuple[tuple[str, str, str], ...] = (
    ("separability", "6.1", "pairwise separability per condition"),
    ("ceiling_removal", "6.1", "ceiling removal"),
    ("dispersion", "B.1", "dispersion test"),
    ("concordance", "6.1", "split-half concordance"),
    ("detectable_effect", "6.1, B.3", "minimum detectable effect"),
    ("database_only", "B.2", "database-only recompute of the pre-specified contrasts"),
    ("reader_audit", "B.2", "audit 1: non-reference reads credited"),
    ("assertion_channel", "B.2", "audit 2: output-assertion channel"),
)
"""(name, paper section, title): ``analysis_<name>.csv`` and the function of `analyses`."""
INDEX_FILE = "analyses.csv"


def write_paper_analyses(root: Path, rows: Sequence[TrialRow]) -> list[Path]:
    """Every analysis of `ANALYSES` (CSV, and PNG under ``figures/``) and the index."""
    from confide.envs.incognita.outputs import analyses
    from confide.envs.incognita.outputs import analysis_figures as draw

    plots = root / FIGURES_DIR
    results = {name: getattr(analyses, name)(rows) for name, _, _ in ANALYSES}
    written: list[Path] = []
    for name, (data, _) in results.items():
        if data:
            written.append(write_table(root / f"analysis_{name}.csv", data))
    made = {name for name, (data, _) in results.items() if data}

    def png(name: str) -> Path:
        return plots / f"analysis_{name}.png"

    drawers = {
        "separability": draw.separability_figure,
        "ceiling_removal": draw.ceiling_figure,
        "dispersion": draw.dispersion_figure,
        "concordance": draw.concordance_figure,
        "detectable_effect": draw.mde_figure,
        "database_only": draw.database_only_figure,
    }
    drawn = {name: drawers[name](results[name][0], png(name)) for name in made & drawers.keys()}
    audits = {"reader_audit", "assertion_channel"}
    if audits <= made:
        audit_png = draw.audits_figure(
            results["reader_audit"][0], results["assertion_channel"][0], png("b2_audits")
        )
        drawn.update(dict.fromkeys(audits, audit_png))
    written += list(dict.fromkeys(drawn.values()))
    index = [
        {
            "analysis": title,
            "paper_section": section,
            "status": "written" if name in made else "not computed",
            "csv": f"analysis_{name}.csv" if name in made else "",
            "figure": f"figures/{drawn[name].name}" if name in drawn else "",
            "reason": results[name][1] or "",
        }
        for name, section, title in ANALYSES
    ]
    return [*written, write_table(root / INDEX_FILE, index)]


def write_incognita_outputs(
    run_dir: Path | str,
    traces: Sequence[Trace],
    reference: CoordinationReference | None = None,
) -> list[Path]:
    """The hook: trial rows, tables and figures for a finished run."""
    root = Path(run_dir)
    rows = in_lineup_order(trial_rows(traces, reference or load_reference()), root)
    root.mkdir(parents=True, exist_ok=True)
    trials_path = write_trials(root / TRIALS_FILE, rows)
    if not rows:
        return [trials_path]
    return [trials_path, *write_analysis(root, rows)]


def write_outputs(run_dir: Path, traces: Sequence[Trace]) -> list[Path]:
    """The outputs hook: a run over converted tasks (its ``experiment.yaml`` names a task
    file and a world) is read against their coordination reference, built by rule
    (section 4.1); any other run against the frozen one. The tasks come from the run's
    own experiment, so a run, its rescore and a Ray driver read the same ones, whatever
    else the process loaded."""
    source = source_files(run_dir)
    reference = None
    if source is not None:
        by_id = {task.id: task for task in load_source_tasks(*source)}
        ids = sorted({trace.header.scenario_id for trace in traces} & by_id.keys())
        if ids:
            first = by_id[ids[0]]
            built = [build_task_reference(by_id[i].world, by_id[i].card) for i in ids]
            reference = assemble(first.suite_id, first.world.state_hash(), built)
    return write_incognita_outputs(run_dir, traces, reference)
