"""`confide leaderboard RUN_DIR...`: rate the seats in each run's `results.csv` and print the
CalBench leaderboard (the CalBench paper §D.4, appendix E). CalBench runs only: another
benchmark's run is refused up front (`cli.scope`).

Declared in `declaration.py` as `confide leaderboard`. With `--out DIR` the
ratings are kept in `DIR/ratings.json` and updated incrementally: runs already applied (by
run id = the `run_id` column, else the run directory's name) are skipped, so re-running with
the same runs leaves the ratings unchanged. `DIR/leaderboard.csv` and `DIR/references.csv`
receive the tables. `--ratings FILE` names the ratings file explicitly.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from confide.cli.scope import require_benchmark
from confide.cli.term import print_table
from confide.errors import ConfideError

if TYPE_CHECKING:
    from confide.envs.calbench.rating.results import SeatResult


UNITS = (
    "Columns, each a mean per seat over every game and setting of the runs: Coord. = share "
    "of the seat's meetings scheduled (%); Excess cost = max(0, cost paid - the oracle's "
    "share) on the cost scale the agents saw (varied errands 1/10/100), against the "
    "scheduled-only oracle on those costs (the CalBench paper D.4); Excess VPS = VPS beyond the "
    "five-slot floor, in slot-equivalent units (F.3-F.4). Excess uniform / varied (Table 1) = "
    "the same seats' excess per cost setting on the 1/2/3 metric scale: the Excess column of "
    "report.html and summary.csv."
)
"""What the leaderboard's columns measure, in which units, and how they relate to the
report's headline table."""


def _collect(run_dirs: list[Path]) -> list[SeatResult]:
    from confide.envs.calbench.rating import read_results_csv

    rows: list[SeatResult] = []
    for run_dir in run_dirs:
        rows.extend(read_results_csv(run_dir / "results.csv", run_id=run_dir.resolve().name))
    return rows


def leaderboard(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run directories, each holding a results.csv "
                                   "(runs/<benchmark>: its latest run).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="Directory for ratings.json, leaderboard.csv and references.csv."),
    ] = None,
    ratings: Annotated[
        Path | None,
        typer.Option(help="Ratings file to update (default: OUT/ratings.json)."),
    ] = None,
) -> None:
    """CalBench only: rate models with OpenSkill score-margin updates; list reference
    protocols by raw metrics."""
    from confide.envs.calbench.rating import (  # imported here: `confide --help` stays fast
        LeaderboardState,
        apply_results,
        leaderboard_tables,
        load_state,
        save_state,
        write_model_csv,
        write_reference_csv,
    )
    from confide.runner.rundir import find_run

    run_dirs = [find_run(path) for path in run_dirs]
    state_path = ratings if ratings is not None else (out / "ratings.json" if out else None)
    try:
        require_benchmark("leaderboard", "calbench", run_dirs)
        rows = _collect(run_dirs)
        start = (
            load_state(state_path)
            if state_path is not None and state_path.exists()
            else LeaderboardState()
        )
        state = apply_results(start, rows)
    except ConfideError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    tables = leaderboard_tables(state)
    if state.models:
        print_table(tables[0])
    else:
        typer.echo("No model seats in these runs: nothing to rate (reference protocols "
                   "are listed by their raw metrics).")
    for table in tables[1:]:
        print_table(table)
    typer.echo(UNITS)
    if state_path is not None:
        save_state(state, state_path)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_model_csv(state, out / "leaderboard.csv")
        write_reference_csv(state, out / "references.csv")
