"""Sotopia-ToM's benchmark outputs for a run directory (the `BenchmarkSpec.write_outputs` hook).

`write_sotopia_outputs(run_dir, traces)` builds one `EpisodeRecord` per judged trace and
writes the analyses of `outputs.analyses` as CSV files in the run directory, with their
renderings as PNGs under ``figures/``, where `confide.report.build_report` embeds them:

- ``figure3a_acquisition_by_round.csv`` / ``.png`` (Figure 3a),
- ``figure22_infomgmt_by_sector.csv`` / ``.png`` (Figure 22),
- ``table4_talk_rate.csv`` (Table 4, a table in the paper too),
- ``ia_failure_modes.csv`` / ``.png`` (section 6.1's split of failed inquiry items),
- ``paired_win_rates.csv`` (section 6.2's paired per-scenario comparisons),
- ``figure3bcd_behaviour_by_method.csv`` / ``.png`` (Figure 3b-d: private share, stale
  and any-violation shares per method across models; per model they are columns of
  ``summary.csv`` too). An
analysis with no rows (e.g. no two lineups to pair) writes no file. The scenarios come
from the run's ``experiment.yaml`` (its suite or task file), as the run loaded them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from confide.core.tables import write_table
from confide.core.trace import Trace
from confide.envs.sotopia_tom.scenario import Scenario

FIGURES_DIR = "figures"


def write_sotopia_outputs(run_dir: Path, traces: Sequence[Trace]) -> list[Path]:
    """Write every analysis of the run's judged episodes; returns the files written."""
    # matplotlib loads only when a run is analysed, not when the spec is imported.
    from confide.envs.sotopia_tom.outputs import analyses, behaviour, figures
    from confide.envs.sotopia_tom.outputs.records import episode_records

    records = episode_records(traces, _scenarios(run_dir))
    tables = {
        "figure3a_acquisition_by_round.csv": analyses.acquisition_by_round(records),
        "figure22_infomgmt_by_sector.csv": analyses.results_by_sector(records),
        "table4_talk_rate.csv": analyses.talk_rate(records),
        "ia_failure_modes.csv": analyses.ia_failure_modes(records),
        "paired_win_rates.csv": analyses.paired_win_rates(records),
        behaviour.FILE: behaviour.behaviour_by_method(run_dir / "results.csv"),
    }
    written = [write_table(run_dir / name, rows) for name, rows in tables.items() if rows]
    plots = run_dir / FIGURES_DIR
    for name, draw in (
        ("figure3a_acquisition_by_round.png", figures.acquisition_by_round),
        ("figure22_infomgmt_by_sector.png", figures.infomgmt_by_sector),
        ("ia_failure_modes.png", figures.ia_failure_modes),
        (behaviour.FILE.replace(".csv", ".png"), figures.behaviour_by_method),
    ):
        rows = tables[name.replace(".png", ".csv")]
        if rows:
            written.append(draw(rows, plots / name))
    return written


def _scenarios(run_dir: Path) -> dict[str, Scenario]:
    """The run's scenarios by id, loaded as the run did (suite or task file)."""
    from confide.envs.sotopia_tom.env import load_tasks

    path = run_dir / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
    data = data if isinstance(data, dict) else {}
    tasks = data.get("tasks")
    suite = None if tasks else data.get("suite")
    return {s.id: s for s in load_tasks(suite, None if tasks is None else str(tasks))}
