"""CalBench's part of `confide eval` (`confide.core.eval_design`).

The evaluated model fills every seat (self-play; the paper's Table 1 games mix four
models, the CalBench paper 4.1, which one model under evaluation cannot reproduce alone);
`--role calbench.others=SPEC` keeps it in the first seat and gives every other seat SPEC
(a model or a reference participant such as `imap`), and the profile then counts the
first seat's rows only. The
VPS judge (F.3) is the evaluated model unless `--role calbench.judge=` names another.
Headline metrics are Table 1's (section 4.2), per cost setting and communication
condition (A.3): success, excess cost, messages per scheduled meeting and fairness
(coordination) and excess VPS (privacy).
"""

from __future__ import annotations

from typing import Any

from confide.core.eval_design import MODEL, EvalDesign, EvalMetric, QuickDesign


def _stratum(task: Any) -> str:
    """Cost setting x difficulty bucket (the suite keeps easy, medium and hard tasks by
    tertiles of the difficulty count d in every cell, suites.py): the two factors that
    move excess cost and fairness most."""
    return f"{task.cost_setting}-{task.difficulty.bucket}"


def _whole_suite(task: Any) -> str:
    """One stratum: the embedded-model budget plays a single task."""
    return "all"


_BY = ("cost_setting", "condition")

DESIGN = EvalDesign(
    benchmark="calbench",
    lineup=MODEL,
    reference_lineup="imap",
    roles={"judge": MODEL},
    role_notes={
        "judge": "the VPS judge (F.3) is the evaluated model itself unless "
        "--role calbench.judge= names another",
        "others": "every other seat is the evaluated model too (self-play; the paper's "
        "Table 1 mixes four models per game) unless --role calbench.others= names a "
        "model or a reference participant for them",
    },
    others_role="others",
    seat_column="participant",
    quick=QuickDesign(
        suite="canonical",
        stratum=_stratum,
        per_stratum=1,
        seed=0,
        why="one task of each cost setting and difficulty bucket of the canonical suite "
        "(uniform and varied cost x easy, medium, hard), all three communication "
        "conditions, the paper's turn budget",
        embedded=QuickDesign(
            suite="tiny",
            stratum=_whole_suite,
            per_stratum=1,
            seed=0,
            why="one task of the tiny suite (N=3 agents, 2 meetings, 8 slots; two "
            "cheap-talk turns a round and one decision retry, stamped on the task), all "
            "three communication conditions: about 25 calls an episode (23 measured in "
            "dm) instead of about 120 on the canonical suite",
        ),
    ),
    paper_file="experiments/calbench_paper.yaml",
    paper={"suite": "canonical", "repetitions": 1, "seed": 0},
    paper_note="the CalBench paper 4.1: the 90-task canonical suite (45 uniform-cost, 45 "
    "varied-cost), N=5 agents, 5 meetings, 16 slots",
    published_settings={"cost_setting": "Setting", "condition": "Condition"},
    metrics=(
        EvalMetric("success", "Coord. (%)", "coordination", "success", by=_BY, scale=100.0,
                   published="Coord.",
                   meaning="share of its meetings a seat got scheduled (S_i, 4.2), x100"),
        EvalMetric("excess", "Excess cost", "coordination", "excess", by=_BY,
                   higher_is_better=False, published="Excess",
                   meaning="displacement cost above the CP-SAT oracle's (C_i, 4.2)"),
        EvalMetric("messages", "Messages / meeting", "coordination", "messages_per_meeting",
                   by=_BY, higher_is_better=False, published="Msgs.",
                   meaning="messages sent per scheduled meeting (E_i, 4.2)"),
        EvalMetric("fairness", "Fairness cost", "coordination", "fairness", by=_BY,
                   higher_is_better=False, published="Fair.",
                   meaning="distance of a seat's excess burden from the game's mean"),
        EvalMetric("vps", "Excess VPS", "privacy", "excess_vps", by=_BY,
                   higher_is_better=False, published="VPS",
                   meaning="private-calendar slots other agents learned beyond the "
                   "communication floor (F.3 for models; protocol VPS for references)"),
    ),
    worst=("success", True),
)
