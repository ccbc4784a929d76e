"""Judge versus self-reflection: aggregate comparison, truth-direction precision and
slot-belief cell agreement (the CalBench paper I.3 Table 16, I.4, I.5 Table 17).

- Comparison (Table 16): over a set of games, nonzero judged belief rows, raw and
  calibrated judge VPS and the judge's excess over the floor, next to the primary
  measurements (reflection-calibrated VPS and its excess; protocol-semantic VPS).
- Precision (I.4): share of nonzero deltas that point toward the truth, overall and per
  game-target; game-targets where both methods have nonzero deltas are joined and each is
  won by the more precise method (or tied); the mean gap is judge minus reflection.
- Cell agreement (I.5, Table 17): cells are keyed (game_id, observer, target, slot); the
  rows of each method for one cell (one per round) are summed, their mean kept. The union
  holds every cell either method reported (zeros included: a reflection reports every
  slot, the judge every slot of its cases); a method that did not report a cell counts 0.
  Statistics on the summed deltas: nonzero counts, nonzero-support Jaccard, coverage each
  way, directional agreement when both are nonzero, Cohen's kappa over signs {-1, 0, 1}
  on the full union, and Pearson correlations (full union, both nonzero). A statistic
  whose denominator is empty or whose variance is zero is None, never a made-up number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from confide.envs.calbench.privacy.deltas import CellRow, ModelVps
from confide.envs.calbench.privacy.vps import GameVps

CellKey = tuple[str, int, int, int]
"""(game_id, observer, target, slot)."""


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """Table 16 for one set of games (metric_comparison.csv)."""

    games: int
    judge_cases: int
    judge_failed_cases: int
    judge_belief_rows: int
    raw_judge_vps: float
    calibrated_judge_vps: float
    excess_calibrated_judge_vps: float
    reflection_belief_rows: int
    raw_reflection_vps: float
    calibrated_reflection_vps: float
    excess_calibrated_reflection_vps: float
    protocol_semantic_vps: float
    protocol_semantic_excess_vps: float


def _nonzero(games: Iterable[ModelVps]) -> int:
    return sum(t.nonzero_deltas for g in games for t in g.targets)


def comparison(
    judge: Sequence[ModelVps], reflection: Sequence[ModelVps], protocol: Sequence[GameVps]
) -> ComparisonRow:
    """Aggregate judge VPS next to the primary measurements of the same games."""
    def total(games: Sequence[ModelVps], field: str) -> float:
        """Summed over the measured targets (an unmeasured excess is None, not zero)."""
        values = (getattr(t, field) for g in games for t in g.targets)
        return float(sum(v for v in values if v is not None))

    return ComparisonRow(
        games=len({g.game_id for g in (*judge, *reflection)} | {p.game.game_id for p in protocol}),
        judge_cases=sum(g.answers for g in judge),
        judge_failed_cases=sum(g.failed_answers for g in judge),
        judge_belief_rows=_nonzero(judge),
        raw_judge_vps=total(judge, "raw_vps_loss_total"),
        calibrated_judge_vps=total(judge, "calibrated_vps_loss_total"),
        excess_calibrated_judge_vps=total(judge, "excess_calibrated_vps_loss_total"),
        reflection_belief_rows=_nonzero(reflection),
        raw_reflection_vps=total(reflection, "raw_vps_loss_total"),
        calibrated_reflection_vps=total(reflection, "calibrated_vps_loss_total"),
        excess_calibrated_reflection_vps=total(reflection, "excess_calibrated_vps_loss_total"),
        protocol_semantic_vps=float(sum(p.game.vps_loss_total for p in protocol)),
        protocol_semantic_excess_vps=float(
            sum(t.excess_vps_loss_total for p in protocol for t in p.targets)
        ),
    )


# -- precision (I.4) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PrecisionRow:
    """One joined game-target (judge_vs_reflection_precision.csv)."""

    game_id: str
    target_agent: int
    judge_nonzero: int
    judge_truth_directed: int
    judge_precision: float
    reflection_nonzero: int
    reflection_truth_directed: int
    reflection_precision: float
    precision_gap: float
    more_precise: str


@dataclass(frozen=True, slots=True)
class PrecisionSummary:
    """I.4 totals (judge_precision_summary.csv)."""

    judge_nonzero: int
    judge_truth_directed: int
    judge_precision: float | None
    reflection_nonzero: int
    reflection_truth_directed: int
    reflection_precision: float | None
    joined_targets: int
    judge_more_precise: int
    reflection_more_precise: int
    ties: int
    mean_precision_gap: float | None
    mean_gap_where_judge_more_precise: float | None


def _targets(games: Sequence[ModelVps]) -> dict[tuple[str, int], tuple[int, int]]:
    return {
        (g.game_id, t.target_agent): (t.nonzero_deltas, t.truth_directed_deltas)
        for g in games
        for t in g.targets
        if t.nonzero_deltas
    }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def precision_rows(judge: Sequence[ModelVps], reflection: Sequence[ModelVps]) -> list[PrecisionRow]:
    """Game-targets with nonzero deltas from both methods, in (game, target) order."""
    mine, theirs = _targets(judge), _targets(reflection)
    rows = []
    for key in sorted(mine.keys() & theirs.keys()):
        (jn, jt), (rn, rt) = mine[key], theirs[key]
        jp, rp = jt / jn, rt / rn
        winner = "judge" if jp > rp else "reflection" if rp > jp else "tie"
        rows.append(PrecisionRow(key[0], key[1], jn, jt, jp, rn, rt, rp, jp - rp, winner))
    return rows


def precision_summary(
    judge: Sequence[ModelVps], reflection: Sequence[ModelVps], rows: Sequence[PrecisionRow]
) -> PrecisionSummary:
    """Overall nonzero precision of each method and the per-target contest."""
    jn, rn = _nonzero(judge), _nonzero(reflection)
    jt = sum(t.truth_directed_deltas for g in judge for t in g.targets)
    rt = sum(t.truth_directed_deltas for g in reflection for t in g.targets)
    won = [r.precision_gap for r in rows if r.more_precise == "judge"]
    return PrecisionSummary(
        jn, jt, jt / jn if jn else None, rn, rt, rt / rn if rn else None, len(rows),
        len(won), sum(r.more_precise == "reflection" for r in rows),
        sum(r.more_precise == "tie" for r in rows),
        _mean([r.precision_gap for r in rows]), _mean(won),
    )


# -- cell agreement (I.5) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CellAgreementRow:
    """One slot-belief cell (judge_reflection_cell_agreement.csv)."""

    game_id: str
    observer_agent: int
    target_agent: int
    slot: int
    judge_rows: int
    judge_delta_sum: int
    judge_delta_mean: float | None
    reflection_rows: int
    reflection_delta_sum: int
    reflection_delta_mean: float | None


@dataclass(frozen=True, slots=True)
class AgreementStats:
    """Table 17 (judge_reflection_agreement.csv)."""

    union_cells: int
    judge_nonzero_cells: int
    reflection_nonzero_cells: int
    both_nonzero: int
    nonzero_support_jaccard: float | None
    judge_coverage_of_reflection_nonzero: float | None
    reflection_coverage_of_judge_nonzero: float | None
    directional_agreement_both_nonzero: float | None
    cohen_kappa_signs_union: float | None
    pearson_union: float | None
    pearson_both_nonzero: float | None


def _collect(cells: Iterable[CellRow]) -> dict[CellKey, list[int]]:
    out: dict[CellKey, list[int]] = {}
    for c in cells:
        out.setdefault((c.game_id, c.observer_agent, c.target_agent, c.slot), []).append(c.delta)
    return out


def cell_agreement(
    judge: Iterable[CellRow], reflection: Iterable[CellRow]
) -> list[CellAgreementRow]:
    """The union of reported cells with summed and mean deltas per method."""
    mine, theirs = _collect(judge), _collect(reflection)
    rows = []
    for key in sorted(mine.keys() | theirs.keys()):
        j, r = mine.get(key, []), theirs.get(key, [])
        rows.append(CellAgreementRow(
            *key, len(j), sum(j), sum(j) / len(j) if j else None,
            len(r), sum(r), sum(r) / len(r) if r else None,
        ))
    return rows


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _pearson(x: Sequence[int], y: Sequence[int]) -> float | None:
    if len(x) < 2:
        return None
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.std() == 0.0 or b.std() == 0.0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def cohen_kappa(x: Sequence[int], y: Sequence[int]) -> float | None:
    """Cohen's kappa of two equally long label sequences (None if chance agreement is 1)."""
    n = len(x)
    if n == 0:
        return None
    labels = sorted(set(x) | set(y))
    observed = sum(a == b for a, b in zip(x, y, strict=True)) / n
    chance = sum((x.count(k) / n) * (y.count(k) / n) for k in labels)
    if chance == 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def agreement_stats(rows: Sequence[CellAgreementRow]) -> AgreementStats:
    """Table 17 from the cell rows."""
    j = [r.judge_delta_sum for r in rows]
    f = [r.reflection_delta_sum for r in rows]
    jn = sum(v != 0 for v in j)
    fn = sum(v != 0 for v in f)
    both = [(a, b) for a, b in zip(j, f, strict=True) if a != 0 and b != 0]
    same = sum((a > 0) == (b > 0) for a, b in both)
    return AgreementStats(
        union_cells=len(rows),
        judge_nonzero_cells=jn,
        reflection_nonzero_cells=fn,
        both_nonzero=len(both),
        nonzero_support_jaccard=_ratio(len(both), jn + fn - len(both)),
        judge_coverage_of_reflection_nonzero=_ratio(len(both), fn),
        reflection_coverage_of_judge_nonzero=_ratio(len(both), jn),
        directional_agreement_both_nonzero=_ratio(same, len(both)),
        cohen_kappa_signs_union=cohen_kappa([int(np.sign(v)) for v in j],
                                            [int(np.sign(v)) for v in f]),
        pearson_union=_pearson(j, f),
        pearson_both_nonzero=_pearson([a for a, _ in both], [b for _, b in both]),
    )


__all__ = [
    "AgreementStats",
    "CellAgreementRow",
    "ComparisonRow",
    "PrecisionRow",
    "PrecisionSummary",
    "agreement_stats",
    "cell_agreement",
    "cohen_kappa",
    "comparison",
    "precision_rows",
    "precision_summary",
]
