"""Sotopia-ToM's part of `confide eval` (`confide.core.eval_design`).

The evaluated model plays every agent of a scenario with the basic strategy (the
paper's design adds the three other prompting strategies, the Sotopia-ToM paper 5.3). The
reference judge reads only typed payloads, so a model agent needs an LLM judge (4.2):
the evaluated model judges itself unless `--role sotopia-tom.judge=` names another (the
paper's judge is GPT-5.2 at high reasoning effort). Headline metrics are Tables 2 and
3's, per prompting strategy.
"""

from __future__ import annotations

from typing import Any

from confide.core.eval_design import MODEL, EvalDesign, EvalMetric, QuickDesign


def _sector(task: Any) -> str:
    """The scenario's sector (3.2: eight sectors)."""
    return str(task.sector or task.id.split("-", 1)[0])


def _one(task: Any) -> str:
    """One stratum: the embedded-model budget plays a single scenario."""
    return "all"


_BY = ("strategy",)
EMBEDDED_TURNS = 12
"""The embedded-model budget's T_max (the paper's is 60, section 5.3)."""

DESIGN = EvalDesign(
    benchmark="sotopia-tom",
    lineup=MODEL,
    reference_lineup="reference",
    roles={"judge": MODEL},
    role_notes={
        "judge": "the LLM judge (4.2) is the evaluated model itself unless "
        "--role sotopia-tom.judge= names another (the paper: GPT-5.2, high reasoning)",
    },
    quick=QuickDesign(
        suite="core",
        stratum=_sector,
        per_stratum=2,  # EFF's spread over scenarios (sd ~0.006) needs 16 of 48
        seed=0,
        why="two scenarios from each of the eight sectors of the core suite (3.2), the "
        "basic strategy",
        embedded=QuickDesign(
            suite="core",
            stratum=_one,
            per_stratum=1,
            seed=0,
            options={"max_turns": EMBEDDED_TURNS},
            why=f"one scenario of the core suite, the basic strategy, T_max "
            f"{EMBEDDED_TURNS} agent turns instead of 60",
        ),
    ),
    paper_file="experiments/sotopia_tom_paper.yaml",
    paper={
        "suite": "core",
        "lineups": [f"{MODEL}:basic", f"{MODEL}:cot-privacy", f"{MODEL}:tom-coach",
                    f"{MODEL}:tom-belief"],
        "seed": 0,
    },
    paper_note="the Sotopia-ToM paper 5.3 and 6: every scenario under the four prompting "
    "strategies, all agents on the evaluated model",
    published_settings={"strategy": "strategy"},
    metrics=(
        EvalMetric("da", "DA", "coordination", "da", by=_BY, published="DA",
                   meaning="disclosure alignment: permitted facts shared with the right "
                   "recipients on the right channel (4.1)"),
        EvalMetric("ia", "IA", "coordination", "ia", by=_BY, published="IA",
                   meaning="information acquisition: desired facts obtained (4.1)"),
        EvalMetric("eff", "EFF", "coordination", "eff", by=_BY, published="EFF",
                   meaning="efficiency: acquisition per turn used (4.1)"),
        EvalMetric("cpv", "CPV", "privacy", "cpv", by=_BY, higher_is_better=False,
                   published="CPV",
                   meaning="critical privacy violations: forbidden facts disclosed (4.1)"),
    ),
    worst=("da", True),
)
