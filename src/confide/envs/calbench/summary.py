"""The Table 2 analogue (calbench.md Table 2 and its caption): one row per cost setting,
method and communication condition, averaged over seat-games.

Columns: `Coord.` = 100 x mean S_{g,i} over seats that attend at least one meeting;
`Excess` = mean max(0, c^real - c^oracle); `Msgs.` = mean E_{g,i} (messages sent per
successful participant-meeting); `Fair.` = mean |e_{g,i} - mean_j e_{g,j}|; N = games.
For a lineup with one method in every seat these equal the per-game means of Table 2.
`VPS` = mean excess VPS per seat-game (`excess_vps`: protocol-semantic for reference
protocols, F.1-F.4; reflection-calibrated for model seats, F.3); the column is left out
when no row of the group carries it rather than filled with a made-up value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SETTING_ORDER = {"uniform": 0, "varied": 1}
CONDITION_ORDER = {"dm": 0, "participant-groupchat": 1, "all-agent-groupchat": 2}


def _number(value: Any) -> float | None:
    """A row value as float; None for missing/empty (rows may come from a CSV)."""
    if value is None or value == "":
        return None
    return float(value)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Result rows (one per episode and seat) -> Table 2 analogue rows."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("status", "ok") != "ok" or "participant" not in row:
            continue
        key = (str(row["cost_setting"]), str(row["participant"]), str(row.get("condition") or "dm"))
        groups.setdefault(key, []).append(row)
    table = []
    for key in sorted(
        groups,
        key=lambda k: (SETTING_ORDER.get(k[0], 9), k[0], k[1], CONDITION_ORDER.get(k[2], 9), k[2]),
    ):
        members = groups[key]
        success = _mean([_number(r["success"]) for r in members])
        entry: dict[str, Any] = {
            "Setting": key[0].capitalize(),
            "Method": key[1],
            "Condition": key[2],
            "N": len({r.get("episode_id", r.get("task_id")) for r in members}),
            "Coord.": None if success is None else 100.0 * success,
            "Excess": _mean([_number(r["excess"]) for r in members]),
            "Msgs.": _mean([_number(r["messages_per_meeting"]) for r in members]),
            "Fair.": _mean([_number(r["fairness"]) for r in members]),
        }
        vps = [v for r in members if (v := _number(r.get("excess_vps"))) is not None]
        if vps:
            entry["VPS"] = _mean(vps)
        table.append(entry)
    return table
