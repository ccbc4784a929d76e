"""Figure 3b-d per method across models (the Sotopia-ToM paper §6.3), from results.csv rows."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from confide.envs.sotopia_tom.outputs.behaviour import behaviour_by_method

COLUMNS = ("status", "episode_id", "strategy", "messages_sent", "private_sent", "eff",
           "violations")


def test_shares_per_method(tmp_path: Path) -> None:
    rows = [
        ("ok", "e1", "basic", 4, 1, 0.0, 0),  # e1: two seats, stale, no violation
        ("ok", "e1", "basic", 2, 1, 0.0, 0),
        ("ok", "e2", "basic", 4, 0, 0.9, 2),  # another model, same method
        ("ok", "e3", "tom-belief", 5, 5, "", ""),  # a failed verdict: out of (c), (d)
        ("error", "e4", "tom-belief", 9, 0, 0.0, 3),
    ]
    path = tmp_path / "results.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    basic, belief = behaviour_by_method(path)
    assert basic["method"] == "basic" and basic["episodes"] == 2
    assert basic["private_share"] == pytest.approx(2 / 10)
    assert (basic["stale"], basic["any_violation"]) == (0.5, 0.5)
    assert belief == {"method": "tom-belief", "episodes": 1, "private_share": 1.0,
                      "stale": None, "any_violation": None}
    assert behaviour_by_method(tmp_path / "missing.csv") == []
