"""The Table 2 analogue (calbench.md Table 2 and its caption): one row per cost setting,
method and communication condition, averaged over seat-games.

Columns: `Coord.` = 100 x mean S_{g,i} over seats that attend at least one meeting;
`Excess` = mean max(0, c^real - c^oracle); `Msgs.` = mean E_{g,i} (messages sent per
successful participant-meeting); `Fair.` = mean |e_{g,i} - mean_j e_{g,j}|; N = games.
For a lineup with one method in every seat these equal the per-game means of Table 2.
`VPS` = mean excess VPS per seat-game (`excess_vps`: protocol-semantic for reference
protocols, F.1-F.4; reflection-calibrated for model seats, F.3); the column is left out
when no row of the group carries it rather than filled with a made-up value.

After each reference-protocol row of the `dm` condition comes the paper's own Table 2 row
for that method and setting (Condition `paper Table 2`, N = 45 tasks), so the main job
prints the paper's numbers next to ours. Our canonical suite is built like section 4.1
but is not the paper's task set, so the rows are comparable, not identical.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from confide.core.tables import group_by, mean, number

SETTING_ORDER = {"uniform": 0, "varied": 1}
PAPER_CONDITION = "paper Table 2"
PAPER_TASKS = 45
PAPER_TABLE2: dict[tuple[str, str], tuple[float, float, float, float, float]] = {
    ("uniform", "imap"): (100.0, 0.26, 2.00, 0.530, 12.40),
    ("uniform", "dsm-private"): (45.8, 0.98, 4.54, 0.809, 0.00),
    ("uniform", "dsm-welfare"): (100.0, 0.27, 2.69, 0.530, 25.05),
    ("uniform", "sdmap"): (62.2, 1.68, 7.48, 0.741, 0.12),
    ("varied", "imap"): (100.0, 0.32, 2.00, 0.665, 12.40),
    ("varied", "dsm-private"): (48.9, 2.08, 4.43, 1.865, 0.00),
    ("varied", "dsm-welfare"): (99.1, 0.46, 2.78, 0.816, 23.55),
    ("varied", "sdmap"): (63.1, 3.64, 7.30, 1.376, 0.08),
}
"""calbench.md Table 2: (setting, method) -> Coord., Excess, Msgs., Fair., VPS."""
_COLUMNS = ("Coord.", "Excess", "Msgs.", "Fair.", "VPS")
CONDITION_ORDER = {"dm": 0, "participant-groupchat": 1, "all-agent-groupchat": 2}


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Result rows (one per episode and seat) -> Table 2 analogue rows."""
    groups = group_by(
        (r for r in rows if r.get("status", "ok") == "ok" and "participant" in r),
        lambda r: (str(r["cost_setting"]), str(r["participant"]), str(r.get("condition") or "dm")),
    )
    table = []
    for key in sorted(
        groups,
        key=lambda k: (SETTING_ORDER.get(k[0], 9), k[0], k[1], CONDITION_ORDER.get(k[2], 9), k[2]),
    ):
        members = groups[key]
        success = mean([number(r["success"]) for r in members])
        entry: dict[str, Any] = {
            "Setting": key[0].capitalize(),
            "Method": key[1],
            "Condition": key[2],
            "N": len({r.get("episode_id", r.get("task_id")) for r in members}),
            "Coord.": None if success is None else 100.0 * success,
            "Excess": mean([number(r["excess"]) for r in members]),
            "Msgs.": mean([number(r["messages_per_meeting"]) for r in members]),
            "Fair.": mean([number(r["fairness"]) for r in members]),
        }
        vps = [v for r in members if (v := number(r.get("excess_vps"))) is not None]
        if vps:
            entry["VPS"] = mean(vps)
        table.append(entry)
        paper = PAPER_TABLE2.get((key[0], key[1])) if key[2] == "dm" else None
        if paper is not None:
            table.append(
                {
                    "Setting": entry["Setting"],
                    "Method": key[1],
                    "Condition": PAPER_CONDITION,
                    "N": PAPER_TASKS,
                    **dict(zip(_COLUMNS, paper, strict=True)),
                }
            )
    return table
