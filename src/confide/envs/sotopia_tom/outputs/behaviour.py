"""Sotopia-ToM Figure 3b-d (the Sotopia-ToM paper 6.3, "aggregated across all models"): per
prompting method, (b) the share of messages sent on the private channel, (c) the share
of stale conversations (nothing acquired, EFF = 0, as `metrics.summarize` counts them)
and (d) the share of conversations with any critical privacy violation.

Read from the run's results.csv (one row per episode and seat): a method's messages are
summed over its seats, an episode counts once for (c) and (d), and an episode whose
verdict failed (empty EFF or violations) is left out of that share, never a zero. A
reference participant (no strategy) is its own method.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any

from confide.core.tables import number

FILE = "figure3bcd_behaviour_by_method.csv"


def behaviour_by_method(results: Path) -> list[dict[str, Any]]:
    """One row per method: private_share, stale, any_violation and the episode count."""
    sent: dict[str, float] = defaultdict(float)
    private: dict[str, float] = defaultdict(float)
    episodes: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    if not results.is_file():
        return []
    with results.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row.get("status", "ok") != "ok" or "strategy" not in row:
                continue
            # a reference participant has no strategy ("-"): it is its own method
            method = row["strategy"] if row["strategy"] != "-" else row.get("model", "-")
            sent[method] += number(row.get("messages_sent")) or 0.0
            private[method] += number(row.get("private_sent")) or 0.0
            episodes[method].setdefault(row.get("episode_id", ""), row)
    table = []
    for method, rows in sorted(episodes.items()):
        effs = [e for r in rows.values() if (e := number(r.get("eff"))) is not None]
        counts = [v for r in rows.values() if (v := number(r.get("violations"))) is not None]
        table.append(
            {
                "method": method,
                "episodes": len(rows),
                "private_share": private[method] / sent[method] if sent[method] else None,
                "stale": sum(e == 0.0 for e in effs) / len(effs) if effs else None,
                "any_violation": sum(v > 0 for v in counts) / len(counts) if counts else None,
            }
        )
    return table
