"""Judge reliability (section A.12): how closely two judges agree on the same transcripts.

Input: two run directories of `sotopia-tom` that judged the same episodes with different
judges (for LLM lineups, run twice with the same `--cache` and different `--role
judge=...`, so the agents' calls are replayed and the transcripts are identical).
Episodes are matched by episode id (a hash of task, lineup, condition and repetition);
a matched pair counts only if both runs recorded the same transcript digest, so a
difference in the conversation is never mistaken for a difference between judges.

Output, as in Table 6: for each metric (DA, IA, EFF, CPV, InfoMgmt), Pearson r and
Spearman rho (with p-values) between the two judges' per-episode scores; and the
condition-level rank correlation: Spearman rho between the two judges' mean InfoMgmt
per condition (a condition is a lineup -- model and strategy -- under one environment
condition), which says whether both judges rank the model-method combinations alike.
A correlation is None when fewer than three pairs exist or one side is constant (it is
undefined there), with the reason in `note`.

`confide rescore RUN --role judge=SPEC` writes this analysis between RUN's judge and the
new one (`write_agreement`, the `compare_scores` hook), into the rescored directory and
so its report: ``table6_judge_agreement.csv`` (one row per metric and the condition
ranking, as Table 6) and ``table6_condition_means.csv`` (each condition's mean InfoMgmt
under both judges, what the condition-level rho ranks). The rescored transcripts are the
source's by construction, so every successful episode pairs.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from confide.core.tables import write_table
from confide.errors import ConfideError

METRICS: tuple[str, ...] = ("da", "ia", "eff", "cpv", "infomgmt")
LABELS = {"da": "DA", "ia": "IA", "eff": "EFF", "cpv": "CPV", "infomgmt": "InfoMgmt"}
CONDITION_RANKING = "condition ranking"
TABLE6 = "table6_judge_agreement.csv"
CONDITION_MEANS = "table6_condition_means.csv"


class AgreementError(ConfideError):
    """A run directory cannot be compared (missing or foreign results)."""


class EpisodeScores(BaseModel):
    """One judged episode of a run."""

    episode_id: str
    condition: str
    transcript_sha: str
    scores: dict[str, float | None]


class Correlation(BaseModel):
    """Pearson and Spearman correlation of paired values."""

    n: int
    pearson: float | None = None
    pearson_p: float | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    note: str | None = None


class ConditionMeans(BaseModel):
    condition: str
    episodes: int
    a: float
    b: float


class AgreementReport(BaseModel):
    """Agreement between the judges of two runs (module docstring)."""

    schema_version: Literal[1] = 1
    run_a: str
    run_b: str
    judge_a: str
    judge_b: str
    matched: int
    different_transcripts: list[str] = Field(default_factory=list)
    only_in_a: int = 0
    only_in_b: int = 0
    metrics: dict[str, Correlation]
    condition_level: Correlation
    conditions: list[ConditionMeans]


def load_run(run_dir: Path | str) -> tuple[str, dict[str, EpisodeScores]]:
    """(judge name, episodes by id) from a run's results.csv."""
    path = Path(run_dir) / "results.csv"
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise AgreementError(f"cannot read {path}: {exc.strerror or exc}") from None
    judges: set[str] = set()
    episodes: dict[str, EpisodeScores] = {}
    for number, row in enumerate(rows, start=2):
        if row.get("status") != "ok" or row.get("episode_id") in episodes:
            continue
        missing = [c for c in ("episode_id", "transcript_sha", "judge", *METRICS) if c not in row]
        if missing:
            raise AgreementError(
                f"{path}:{number}: not a sotopia-tom result row (missing {', '.join(missing)})"
            )
        judges.add(row["judge"])
        lineup, condition = row.get("lineup", ""), row.get("condition", "")
        episodes[row["episode_id"]] = EpisodeScores(
            episode_id=row["episode_id"],
            condition=f"{lineup} [{condition}]" if condition else lineup,
            transcript_sha=row["transcript_sha"],
            scores={m: float(row[m]) if row[m] not in ("", "None") else None for m in METRICS},
        )
    if not episodes:
        raise AgreementError(f"{path}: no successful episodes to compare")
    return ", ".join(sorted(judges)), episodes


def correlate(a: Sequence[float], b: Sequence[float]) -> Correlation:
    """Pearson and Spearman of paired values (None where undefined)."""
    from scipy import stats  # imported here: scipy is slow to import and only needed now

    if len(a) != len(b):
        raise ValueError(f"paired values differ in length: {len(a)} != {len(b)}")
    n = len(a)
    if n < 3:
        return Correlation(n=n, note="fewer than 3 pairs")
    if len(set(a)) == 1 or len(set(b)) == 1:
        return Correlation(n=n, note="one judge's scores are constant")
    pearson = stats.pearsonr(a, b)
    spearman = stats.spearmanr(a, b)
    return Correlation(
        n=n,
        pearson=_finite(pearson.statistic),
        pearson_p=_finite(pearson.pvalue),
        spearman=_finite(spearman.statistic),
        spearman_p=_finite(spearman.pvalue),
    )


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def agreement(run_a: Path | str, run_b: Path | str) -> AgreementReport:
    """Compare the judges of two runs over their common, identical transcripts."""
    judge_a, a = load_run(run_a)
    judge_b, b = load_run(run_b)
    common = [e for e in a if e in b]
    different = [e for e in common if a[e].transcript_sha != b[e].transcript_sha]
    pairs = [e for e in common if e not in different]
    if not pairs:
        raise AgreementError(
            f"{run_a} and {run_b} share no episode with an identical transcript "
            f"({len(common)} common episode ids, {len(different)} with different transcripts)"
        )
    metrics = {}
    for metric in METRICS:
        xs: list[float] = []
        ys: list[float] = []
        for e in pairs:
            x, y = a[e].scores[metric], b[e].scores[metric]
            if x is not None and y is not None:
                xs.append(x)
                ys.append(y)
        metrics[metric] = correlate(xs, ys)
    by_condition: dict[str, list[tuple[float, float]]] = {}
    for e in pairs:
        x, y = a[e].scores["infomgmt"], b[e].scores["infomgmt"]
        if x is not None and y is not None:
            by_condition.setdefault(a[e].condition, []).append((x, y))
    conditions = [
        ConditionMeans(
            condition=c,
            episodes=len(v),
            a=sum(x for x, _ in v) / len(v),
            b=sum(y for _, y in v) / len(v),
        )
        for c, v in sorted(by_condition.items())
    ]
    return AgreementReport(
        run_a=str(run_a),
        run_b=str(run_b),
        judge_a=judge_a,
        judge_b=judge_b,
        matched=len(pairs),
        different_transcripts=different,
        only_in_a=len([e for e in a if e not in b]),
        only_in_b=len([e for e in b if e not in a]),
        metrics=metrics,
        condition_level=correlate([c.a for c in conditions], [c.b for c in conditions]),
        conditions=conditions,
    )


def table6_rows(report: AgreementReport) -> list[dict[str, Any]]:
    """Table 6 as rows: Pearson and Spearman per metric, then the condition-level
    Spearman (Pearson is not reported for it, as in the paper)."""

    def row(name: str, c: Correlation, *, pearson: bool = True) -> dict[str, Any]:
        return {
            "metric": name,
            "n": c.n,
            "pearson_r": c.pearson if pearson else None,
            "pearson_p": c.pearson_p if pearson else None,
            "spearman_rho": c.spearman,
            "spearman_p": c.spearman_p,
            "note": c.note,
            "judge_a": report.judge_a,
            "judge_b": report.judge_b,
        }

    return [
        *(row(LABELS[m], c) for m, c in report.metrics.items()),
        row(CONDITION_RANKING, report.condition_level, pearson=False),
    ]


def write_agreement(source: Path, rescored: Path) -> list[dict[str, Any]]:
    """Write the agreement of `source`'s judge with `rescored`'s into `rescored` (module
    docstring) and return the Table 6 rows. When there is nothing to pair (no successful
    episode, or no results.csv in the source) no file is written and the one row says
    why: the rescore itself stands."""
    try:
        report = agreement(source, rescored)
    except AgreementError as exc:
        return [{"metric": None, "note": f"no judge agreement: {exc}"}]
    rows = table6_rows(report)
    write_table(rescored / TABLE6, rows)
    write_table(rescored / CONDITION_MEANS, [c.model_dump() for c in report.conditions])
    return rows
