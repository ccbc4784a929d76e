"""The Table 2 analogue (the CalBench paper, Table 2 and its caption): one row per cost setting,
method and communication condition, averaged over seat-games.

Columns: `Coord.` = 100 x mean S_{g,i} over seats that attend at least one meeting;
`Excess` = mean max(0, c^real - c^oracle); `Msgs.` = mean E_{g,i} (messages sent per
successful participant-meeting); `Fair.` = mean |e_{g,i} - mean_j e_{g,j}|; N = games;
`Seats` = seat-games (Table 1's N: a model playing one seat of 45 games has 45);
`Meetings` = mean meetings scheduled per seat-game (Table 1, at most the meetings a seat
is invited to).
For a lineup with one method in every seat these equal the per-game means of Table 2.
`VPS` = mean excess VPS per seat-game (`excess_vps`: protocol-semantic for reference
protocols, F.1-F.4; reflection-calibrated for model seats, F.3); the column is left out
when no row of the group carries it rather than filled with a made-up value.

The paper's own Table 2 rows (N = 45 tasks) are published reference data
(`envs/calbench/published/table2.csv`, `confide.core.published`), never rows of this
table: `confide run` prints each under the matching reference-protocol `dm` row with a
`source` column, and the run directory keeps them in published.csv. Our canonical suite
is built like section 4.1 but is not the paper's task set, so the rows are comparable,
not identical.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any

from confide.core.published import published_rows
from confide.core.spend import SeatSpend
from confide.core.tables import mean, number

SETTING_ORDER = {"uniform": 0, "varied": 1}
_COLUMNS = ("Coord.", "Excess", "Msgs.", "Fair.", "VPS")


def paper_table2() -> dict[tuple[str, str], tuple[float, ...]]:
    """CalBench paper Table 2 from the published rows: (setting, method) -> Coord., Excess,
    Msgs., Fair., VPS."""
    return {
        (row.setting["Setting"].lower(), row.model): tuple(row.metrics[c] for c in _COLUMNS)
        for row in published_rows("calbench")
        if row.table == "Table 2"
    }


CONDITION_ORDER = {"dm": 0, "participant-groupchat": 1, "all-agent-groupchat": 2}


class _Group:
    """One Table 2 row's inputs, gathered a result row at a time (a 10,000-episode run's
    rows are never held together): the seat values each mean is taken over, as compact
    arrays, and the distinct episodes."""

    def __init__(self) -> None:
        self.columns = {name: array("d") for name in _MEANS}
        self.vps = array("d")
        self.episodes: set[Any] = set()
        self.spend = SeatSpend()
        self.seats = 0

    def add(self, row: dict[str, Any]) -> None:
        self.episodes.add(row.get("episode_id", row.get("task_id")))
        self.seats += 1
        for name, values in self.columns.items():
            if (value := number(row.get(name))) is not None:
                values.append(value)
        if (vps := number(row.get("excess_vps"))) is not None:
            self.vps.append(vps)
        self.spend.add(row)


_MEANS = ("success", "excess", "messages_per_meeting", "fairness", "scheduled")


def summarize(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Result rows (one per episode and seat) -> Table 2 analogue rows (one pass)."""
    groups: dict[tuple[str, str, str], _Group] = {}
    for r in rows:
        if r.get("status", "ok") == "ok" and "participant" in r:
            key = (str(r["cost_setting"]), str(r["participant"]), str(r.get("condition") or "dm"))
            groups.setdefault(key, _Group()).add(r)
    table = []
    for key in sorted(
        groups,
        key=lambda k: (SETTING_ORDER.get(k[0], 9), k[0], k[1], CONDITION_ORDER.get(k[2], 9), k[2]),
    ):
        group = groups[key]
        success = mean(group.columns["success"])
        entry: dict[str, Any] = {
            "Setting": key[0].capitalize(),
            "Method": key[1],
            "Condition": key[2],
            "N": len(group.episodes),
            "Seats": group.seats,
            "Meetings": mean(group.columns["scheduled"]),
            "Coord.": None if success is None else 100.0 * success,
            "Excess": mean(group.columns["excess"]),
            "Msgs.": mean(group.columns["messages_per_meeting"]),
            "Fair.": mean(group.columns["fairness"]),
        }
        if group.vps:
            entry["VPS"] = mean(group.vps)
        entry.update(group.spend.columns())  # a run that calls a model: its spend per seat
        table.append(entry)
    return table
