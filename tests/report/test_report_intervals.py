"""95% intervals of the headline's means (report/intervals.py): a hand-computed case, and
no interval where a cell is not a group mean (a ratio, a count, a published row)."""

from __future__ import annotations

import math
import random

import pytest

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


def _naive(
    summary: list[dict[str, str]], results: list[dict[str, str]]
) -> list[dict[str, tuple[float, float]]]:
    """The definition read literally, row by row (the module docstring): each summary row's
    group scanned from the results rows, each column's values gathered by episode in row
    order, and the same sums in the same order."""
    from confide.view.episodes import number

    def values(group: list[dict[str, str]], column: str) -> dict[str, list[float]]:
        by_episode: dict[str, list[float]] = {}
        for row in group:
            if (v := number(row.get(column))) is not None:
                by_episode.setdefault(row.get("episode_id", ""), []).append(v)
        return by_episode

    def mean(v: dict[str, list[float]]) -> float | None:
        n = sum(len(x) for x in v.values())
        return sum(sum(x) for x in v.values()) / n if n else None

    columns = [c for c in (results[0] if results else {})
               if any(number(r.get(c)) is not None for r in results[:200])]
    groups = []
    for row in summary:
        keys = {v.casefold() for v in row.values() if v and number(v) is None}
        groups.append([r for r in results if keys and keys <= {
            (c or "").casefold() for c in r.values()}])
    out: list[dict[str, tuple[float, float]]] = [{} for _ in summary]
    for column in summary[0] if summary else {}:
        cells = [number(row.get(column)) for row in summary]
        if any(row.get(column) and c is None for row, c in zip(summary, cells, strict=True)):
            continue
        if all((row.get(column) or "").lstrip("-").isdigit() for row in summary):
            continue
        rows = [(c, g) for c, g in zip(cells, groups, strict=True) if g and c is not None]
        match = next(((s, k) for s in columns for k in (1.0, 100.0) if rows and all(
            (m := mean(values(g, s))) is not None
            and math.isclose(m * k, c, rel_tol=1e-9, abs_tol=1e-9) for c, g in rows)), None)
        if match is None:
            continue
        source, scale = match
        for i, group in enumerate(groups):
            v = values(group, source)
            if len(v) < 2:
                continue
            n = sum(len(x) for x in v.values())
            m = sum(sum(x) for x in v.values()) / n
            spread = sum((sum(x) - m * len(x)) ** 2 for x in v.values())
            se = math.sqrt(len(v) / (len(v) - 1) * spread) / n
            out[i][column] = ((m - Z95 * se) * scale, (m + Z95 * se) * scale)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_intervals_are_the_definition_to_the_last_bit(seed: int) -> None:
    """The column-wise reading (rows found through a key index, each distinct cell parsed
    once) gives exactly the row-by-row definition's floats: random runs with episodes'
    rows interleaved, blank and text cells, keys in differing case, and (odd seeds) rows
    missing columns."""
    rng = random.Random(seed)
    lineups, settings = ["imap", "sdmap", "Mock/A"], ["uniform", "varied"]
    results = []
    for _ in range(300):
        row = {"episode_id": f"e{rng.randrange(60)}", "lineup": rng.choice(lineups),
               "cost_setting": rng.choice(settings),
               "success": rng.choice(["0", "1", "0.5", "", "True", "n/a"]),
               "score": f"{rng.random():.6f}", "note": rng.choice(["x", "", "imap"])}
        if seed % 2 and rng.random() < 0.1:
            del row[rng.choice(["note", "score", "episode_id"])]
        results.append(row)
    summary = []
    for lineup in [*lineups, "paper row"]:
        for setting in settings:
            keys = {lineup.casefold(), setting}  # a note of "imap" puts a row in imap's group
            group = [r for r in results if keys <= {c.casefold() for c in r.values()}]
            scores = [float(r["score"]) for r in group if "score" in r]
            by_ep: dict[str, list[float]] = {}
            for r in group:
                if "score" in r:
                    by_ep.setdefault(r.get("episode_id", ""), []).append(float(r["score"]))
            n = sum(len(x) for x in by_ep.values())
            mean = sum(sum(x) for x in by_ep.values()) / n if n else 0.0
            summary.append({"Method": lineup.upper(), "Cost": setting.title(),
                            "N": str(len(scores)), "Score": repr(mean * 100)})
    found = intervals(summary, results)
    assert found == _naive(summary, results)
    assert any("Score" in row for row in found)  # the score column was matched
