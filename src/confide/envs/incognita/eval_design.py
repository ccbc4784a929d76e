"""Incognita's part of `confide eval` (`confide.core.eval_design`).

The evaluated model is the service agent. The customer simulator and every desk read
prose only as models (section 3.2), so they default to the evaluated model unless
`--role incognita.customer=` / `--role incognita.desk=` name another (the paper runs
them on one simulator model, section 5); so does the judge of the cards' output
assertions, which a model agent's prose needs (section 5: a fixed natural-language
judge). Headline metrics: success and information acquisition (4.2) per
access condition. Incognita scores no privacy leakage: the disclosure gate releases a
customer fact only when asked for it, and nothing measures what leaves the service side.
"""

from __future__ import annotations

from typing import Any

from confide.core.eval_design import MODEL, EvalDesign, EvalMetric, QuickDesign

_BY = ("condition",)
EMBEDDED_TURNS = 10
"""The embedded-model budget's agent turns: a 135M model does not finish a card in 300."""


def _one(task: Any) -> str:
    """One stratum: the embedded-model budget plays a single card."""
    return "all"


def _size(task: Any) -> str:
    """Reference actions of the card: 1-2, 3-5 or 6+ (the tasks' spread of difficulty)."""
    actions = len(task.card.gold_actions)
    return "1-2 actions" if actions <= 2 else "3-5 actions" if actions <= 5 else "6+ actions"


DESIGN = EvalDesign(
    benchmark="incognita",
    lineup=MODEL,
    reference_lineup="reference",
    roles={"customer": MODEL, "desk": MODEL, "judge": MODEL},
    role_notes={
        "customer": "the customer simulator is the evaluated model unless "
        "--role incognita.customer= names another (the paper: one fixed simulator model)",
        "desk": "the intermediary and the six desks are the evaluated model unless "
        "--role incognita.desk= names another",
        "judge": "the output-assertion judge is the evaluated model unless "
        "--role incognita.judge= names another (the paper: one fixed judge model; "
        "`literal` scores by digits and ids only)",
    },
    quick=QuickDesign(
        suite=None,
        stratum=_size,
        per_stratum=1,
        seed=0,
        why="one card of each size (1-2, 3-5 and 6+ reference actions) of the 18-card "
        "suite, all three access conditions",
        embedded=QuickDesign(
            suite=None,
            stratum=_one,
            per_stratum=1,
            seed=0,
            options={"max_turns": EMBEDDED_TURNS},
            why=f"one card of the 18-card suite, all three access conditions, "
            f"{EMBEDDED_TURNS} agent turns instead of 300",
        ),
    ),
    paper_file="experiments/incognita_paper.yaml",
    paper={"conditions": ["direct", "indirect", "social"], "repetitions": 3,
           "seed": 20260820},
    paper_note="the Incognita paper 5: the 18 cards x 3 access conditions x 3 repetitions, "
    "conditions in Latin-square order",
    published_settings={"condition": "condition"},
    metrics=(
        EvalMetric("success", "Success", "coordination", "success", by=_BY,
                   published="success",
                   meaning="final database state equals the gold state and the output "
                   "assertions hold (section 4)"),
        EvalMetric("acquisition", "Information acquisition", "coordination",
                   "information_acquisition", table="incognita_trials.csv", by=_BY,
                   task_column="task",
                   meaning="share of the reference information items the agent obtained "
                   "(4.1)"),
    ),
    no_privacy="Incognita scores no privacy leakage: the disclosure gate releases a "
    "customer fact only when it is asked for, and no metric measures what leaves the "
    "service side",
    worst=("success", True),
)
