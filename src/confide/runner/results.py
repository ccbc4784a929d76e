"""Result rows: one per episode and seat, rebuilt from complete traces."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confide.core.tables import read_table, write_table
from confide.core.trace import EpisodeEnd
from confide.redaction import scrub_data
from confide.runner.expand import EpisodePlan

KEY_COLUMNS = ("episode_id", "task_id", "lineup", "condition", "repetition", "seed", "status")


def result_rows(
    plans: Sequence[EpisodePlan], footers: Sequence[EpisodeEnd | None]
) -> list[dict[str, Any]]:
    """Each seat row of each successful episode (from its trace footer, None when the
    trace has none), prefixed with the episode's key columns; a failed episode contributes
    one row with its status and error."""
    rows: list[dict[str, Any]] = []
    for plan, footer in zip(plans, footers, strict=True):
        key: dict[str, Any] = {
            "episode_id": plan.episode_id,
            "task_id": plan.task.id,
            "lineup": plan.lineup_text,
            "condition": plan.condition or "",
            "repetition": plan.repetition,
            "seed": plan.seed,
            "status": footer.status if footer is not None else "incomplete",
        }
        if footer is None or footer.status != "ok":
            rows.append({**key, "error": footer.error if footer is not None else ""})
            continue
        rows.extend({**key, **row} for row in footer.rows)
    return rows


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """`write_table` of the rows without secrets (results.csv and summary.csv)."""
    write_table(path, scrub_data(list(rows)))


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV written by `write_csv`."""
    return read_table(path)
