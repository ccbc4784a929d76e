"""The paper's behavioural analyses (the Sotopia-ToM paper §6.2, 6.3, A.11) as tables over episodes.

Each function takes `EpisodeRecord`s (one per judged episode, built from its trace by
`outputs.records`) and returns CSV rows; `outputs.write` writes and plots them. Episodes
are grouped by their lineup label (model, strategy), as in `metrics.summarize`.

- `acquisition_by_round` (Figure 3a, section 6.3: "knowledge acquisition is heavily
  front-loaded"): for each round r, the share of desired items (every (agent, item) of
  D_a) that had reached their agent by round r, i.e. t_k <= r with t_k the earliest round
  of A.7's EFF; never-acquired items count in the denominator throughout. Episodes whose
  EFF verdict failed are left out.
- `results_by_sector` (Figure 22, A.11 "InfoMgmt broken down by professional sector"):
  mean InfoMgmt per sector and lineup; sectors ordered from easiest (highest mean over all
  lineups) to hardest, as the paper sorts them.
- `talk_rate` (Table 4, A.11): per lineup, mean rounds, mean messages, and the talk rate
  "messages per agent per round (1.0 = every agent speaks every round)", computed per
  episode and then averaged (Table 4's GPT-5-Nano row, 46.1 messages over 15.1 rounds at
  0.93, is only consistent with a mean of per-episode rates).
- `ia_failure_modes` (section 6.1: "79.8% of failed inquiry items correspond to agents
  never asking at all, not routing errors (10.3% wrong person) or channel mistakes (9.9%
  wrong channel)"): every desired item with ia(k) < 1 falls in exactly one class, judged
  on its actual set A_k against E_k = {(owner, sigma)}: `never_asked` (A_k empty),
  `wrong_person` (some request went to someone other than the owner, including a public
  question addressed to nobody), else `wrong_channel` (only the owner was asked, on the
  other channel). Episodes whose IA verdict failed are left out.
- `paired_win_rates` (section 6.2: "in paired per-scenario comparisons across all
  models, ToM-Belief outperforms Baseline on 72% ... of scenarios"): for two strategies
  of one model, or two models with one strategy, the episodes of the same scenario and
  repetition are paired and InfoMgmt compared; strategy pairs are pooled over models and
  model pairs over strategies. Win rate = wins / pairs (ties count as pairs, not wins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from confide.core.tables import group_by, mean

FailureMode = Literal["never_asked", "wrong_person", "wrong_channel"]
FAILURE_MODES: tuple[FailureMode, ...] = ("never_asked", "wrong_person", "wrong_channel")


@dataclass(frozen=True)
class EpisodeRecord:
    """What the analyses need of one judged episode (None: that verdict failed)."""

    scenario_id: str
    repetition: int
    model: str
    strategy: str
    sector: str
    agents: int
    rounds: int
    messages: int
    infomgmt: float | None
    acquired: tuple[int | None, ...] | None
    """t_k of every desired item of every agent (None: never acquired)."""
    ia_failures: tuple[FailureMode, ...] | None = field(default=None)
    """The failure mode of every desired item with ia(k) < 1."""


def _label(record: EpisodeRecord) -> tuple[str, str]:
    return record.model, record.strategy


def acquisition_by_round(records: Sequence[EpisodeRecord]) -> list[dict[str, Any]]:
    """Figure 3a: cumulative share of desired items acquired by each round, per lineup."""
    rows: list[dict[str, Any]] = []
    for (model, strategy), members in sorted(group_by(records, _label).items()):
        times = [t for r in members if r.acquired is not None for t in r.acquired]
        if not times:
            continue
        last = max(
            max((t for t in times if t is not None), default=1), *(r.rounds for r in members)
        )
        for rnd in range(1, last + 1):
            got = sum(1 for t in times if t is not None and t <= rnd)
            rows.append(
                {
                    "model": model,
                    "strategy": strategy,
                    "round": rnd,
                    "acquired": got,
                    "desired": len(times),
                    "share": got / len(times),
                }
            )
    return rows


def results_by_sector(records: Sequence[EpisodeRecord]) -> list[dict[str, Any]]:
    """Figure 22: mean InfoMgmt per sector and lineup, sectors easiest first."""
    scored = [r for r in records if r.infomgmt is not None]
    overall = {
        s: mean(r.infomgmt for r in m) for s, m in group_by(scored, lambda r: r.sector).items()
    }
    order = sorted(overall, key=lambda s: (-(overall[s] or 0.0), s))
    rows = []
    for sector in order:
        in_sector = [r for r in scored if r.sector == sector]
        for (model, strategy), members in sorted(group_by(in_sector, _label).items()):
            rows.append(
                {
                    "sector": sector,
                    "model": model,
                    "strategy": strategy,
                    "episodes": len(members),
                    "InfoMgmt": mean(r.infomgmt for r in members),
                }
            )
    return rows


def talk_rate(records: Sequence[EpisodeRecord]) -> list[dict[str, Any]]:
    """Table 4: average rounds, messages and talk rate per lineup, by talk rate."""
    rows = []
    for (model, strategy), members in group_by(records, _label).items():
        rates = [r.messages / (r.agents * r.rounds) for r in members if r.rounds and r.agents]
        rows.append(
            {
                "model": model,
                "strategy": strategy,
                "episodes": len(members),
                "avg_rounds": mean(float(r.rounds) for r in members),
                "avg_messages": mean(float(r.messages) for r in members),
                "talk_rate": mean(rates),
            }
        )
    return sorted(rows, key=lambda row: (-(row["talk_rate"] or 0.0), row["model"], row["strategy"]))


def classify_inquiry(actual: set[tuple[str, str]], owner: str, channel: str) -> FailureMode | None:
    """The failure mode of one desired item from A_k and E_k = {(owner, channel)}; None
    when the item did not fail (A_k == E_k, ia(k) = 1)."""
    if actual == {(owner, channel)}:
        return None
    if not actual:
        return "never_asked"
    if any(name != owner for name, _ in actual):
        return "wrong_person"
    return "wrong_channel"


def ia_failure_modes(records: Sequence[EpisodeRecord]) -> list[dict[str, Any]]:
    """The IA failure-mode split per lineup: count and share of each mode."""
    rows = []
    for (model, strategy), members in sorted(group_by(records, _label).items()):
        modes = [m for r in members if r.ia_failures is not None for m in r.ia_failures]
        row: dict[str, Any] = {"model": model, "strategy": strategy, "failed_items": len(modes)}
        for mode in FAILURE_MODES:
            count = sum(1 for m in modes if m == mode)
            row[mode] = count
            row[f"{mode}_share"] = count / len(modes) if modes else None
        rows.append(row)
    return rows


def paired_win_rates(records: Sequence[EpisodeRecord]) -> list[dict[str, Any]]:
    """Paired per-scenario InfoMgmt comparisons: strategies within a model, models within
    a strategy (module docstring)."""
    scored = {
        (r.model, r.strategy, r.scenario_id, r.repetition): r.infomgmt
        for r in records
        if r.infomgmt is not None
    }
    tallies: dict[tuple[str, str, str], list[int]] = {}
    for (m1, s1, sc, rep), a in scored.items():
        for (m2, s2, sc2, rep2), b in scored.items():
            if (sc, rep) != (sc2, rep2) or (m1, s1) >= (m2, s2):
                continue
            if m1 == m2:
                key = ("strategy", s1, s2)
            elif s1 == s2:
                key = ("model", m1, m2)
            else:
                continue
            tally = tallies.setdefault(key, [0, 0, 0])
            tally[0 if a > b else 1 if a == b else 2] += 1
    rows = []
    for (kind, first, second), (wins, ties, losses) in sorted(tallies.items()):
        pairs = wins + ties + losses
        rows.append(
            {
                "compare": kind,
                "a": first,
                "b": second,
                "pairs": pairs,
                "a_wins": wins,
                "ties": ties,
                "b_wins": losses,
                "a_win_rate": wins / pairs,
                "b_win_rate": losses / pairs,
            }
        )
    return rows


__all__ = [
    "FAILURE_MODES",
    "EpisodeRecord",
    "FailureMode",
    "acquisition_by_round",
    "classify_inquiry",
    "ia_failure_modes",
    "paired_win_rates",
    "results_by_sector",
    "talk_rate",
]
