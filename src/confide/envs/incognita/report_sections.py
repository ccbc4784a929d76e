"""Incognita's output files in report.html (core/viewing.ReportSection): what each shows,
in words, and where the paper defines it (Incognita paper)."""

from __future__ import annotations

from confide.core.viewing import ReportSection as S

SECTIONS: dict[str, S] = {
    "figures/figure2_success.png": S(
        "Success by access condition", "Task success of every model in each arm, averaged "
        "over tasks, with the native tau-bench anchor first when the run has it, and the "
        "task-paired differences between neighbouring arms.",
        "6.1 (Figure 2; the native anchor: Figure 5)", data="figure2_success.csv"),
    "figure2_success.csv": S(
        "Success by access condition (data)", "Success, tasks and trials per model and "
        "arm.", "6.1 (Figure 2)"),
    "figure2_paired_differences.csv": S(
        "Paired differences between conditions", "The task-paired contrasts between "
        "neighbouring arms (native, direct, indirect, social) with their intervals.",
        "5, 6.1"),
    "figures/figure6_cost.png": S(
        "The cost of reaching through others", "The evaluated agent's actions per episode "
        "and the cost per episode in both scopes, its own calls within all calls, per model "
        "and arm.", "6.3 (Figure 6)", data="figure6_cost.csv"),
    "figure6_cost.csv": S(
        "Effort and cost (data)", "Success, agent actions, the agent's cost and the whole "
        "episode's cost per model and arm (unpriced when a call has no price).",
        "6.3 (Figure 6)"),
    "figures/figure3_outcomes_processes.png": S(
        "Where trajectories break", "The outcome composition of every cell and the completion "
        "of the three coordination processes.", "6.2 (Figure 3)", data="figure3_outcomes.csv"),
    "figure3_outcomes.csv": S(
        "Outcome types", "Successes and the five failure types per model and condition.",
        "4.3, 6.2"),
    "figure3_processes.csv": S(
        "Coordination processes", "Role identification, holder contacted, information "
        "acquisition and execution, with actions and cost.", "4.2, 6.2-6.3"),
    "figures/table1_interactions.png": S(
        "Model-by-condition interactions", "Each pair of models' difference-in-differences "
        "between centralized and socially distributed access, with exact and Holm p-values.",
        "B.1 (Table 1)", data="table1_interactions.csv"),
    "table1_interactions.csv": S(
        "Model-by-condition interactions (data)", "The task-blocked sign-flip tests of every "
        "model pair and the global dispersion test.", "B.1 (Table 1)"),
    "figures/table2_corpus_size.png": S(
        "Tasks needed to resolve the largest gap", "Per condition, the post-hoc plug-in "
        "number of tasks and the implied cost of resolving its largest observed model gap.",
        "B.3 (Table 2)", data="table2_corpus_size.csv"),
    "table2_corpus_size.csv": S(
        "Corpus size (data)", "Gap spread, largest gap, tasks and implied cost per "
        "condition.", "B.3 (Table 2)"),
    "incognita_trials.csv": S(
        "Trials", "One row per trial: success, failure type and process scores.", "4"),
    "analyses.csv": S(
        "Analyses run", "Which of the paper's analyses this run could compute, and why not "
        "otherwise.", "5-6"),
    "results.csv": S(
        "Results per episode and seat", "Every trial with its success, database check, turns "
        "and messages.", "3.3"),
}
