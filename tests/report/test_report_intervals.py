"""95% intervals of the headline's means (report/intervals.py): a hand-computed case, and
no interval where a cell is not a group mean (a ratio, a count, a published row)."""

from __future__ import annotations

import math

from confide.report.intervals import Z95, intervals

# two episodes of two seats each for lineup a; one episode for lineup b
RESULTS = [
    {"episode_id": "e1", "participant": "a", "success": "1.0", "msgs": "4"},
    {"episode_id": "e1", "participant": "a", "success": "0.0", "msgs": "2"},
    {"episode_id": "e2", "participant": "a", "success": "1.0", "msgs": "6"},
    {"episode_id": "e2", "participant": "a", "success": "1.0", "msgs": ""},
    {"episode_id": "e3", "participant": "b", "success": "0.5", "msgs": "1"},
]


def test_a_mean_gets_its_cluster_robust_interval() -> None:
    summary = [
        {"Method": "A", "N": "2", "Coord.": "75.0", "Ratio": "0.123"},
        {"Method": "b", "N": "1", "Coord.": "50.0", "Ratio": "0.5"},
        {"Method": "a", "N": "2", "Coord.": "80.0", "Ratio": "1.0"},  # not this run's
    ]
    summary[2]["Method"] = "paper row"
    found = intervals(summary, RESULTS)
    # lineup a, success x 100: m = 3/4; clusters e1 (sum 1, n 2), e2 (sum 2, n 2)
    spread = (1 - 0.75 * 2) ** 2 + (2 - 0.75 * 2) ** 2
    se = math.sqrt(2 / 1 * spread) / 4
    low, high = found[0]["Coord."]
    assert math.isclose(low, 100 * (0.75 - Z95 * se))
    assert math.isclose(high, 100 * (0.75 + Z95 * se))
    assert "Ratio" not in found[0] and "N" not in found[0]  # no column's mean; a count
    assert found[1] == {} and found[2] == {}  # one episode; a row no result belongs to


def test_blank_cells_are_left_out_of_the_mean() -> None:
    found = intervals([{"Method": "a", "Msgs": "4.0"}], RESULTS)
    # msgs over a's rows: 4, 2, 6 (one blank): mean 4; e1 (6, n 2), e2 (6, n 1)
    spread = (6 - 4 * 2) ** 2 + (6 - 4 * 1) ** 2
    se = math.sqrt(2 * spread) / 3
    assert found[0]["Msgs"] == (4 - Z95 * se, 4 + Z95 * se)
