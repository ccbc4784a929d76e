"""Incognita's output files in report.html (core/viewing.ReportSection): what each shows,
in words, and where the paper defines it (Incognita paper)."""

from __future__ import annotations

from confide.core.viewing import ReportSection as S

SECTIONS: dict[str, S] = {
    "figures/figure2_success.png": S(
        "Success by access condition", "Task success of every model in each access condition, "
        "averaged over tasks.", "6.1 (Figure 2)", data="figure2_success.csv"),
    "figure2_success.csv": S(
        "Success by access condition (data)", "Success, tasks and trials per model and "
        "condition.", "6.1 (Figure 2)"),
    "figure2_paired_differences.csv": S(
        "Paired differences between conditions", "The task-paired contrasts between "
        "conditions with their intervals.", "5, 6.1"),
    "figures/figure3_outcomes_processes.png": S(
        "Where trajectories break", "The outcome composition of every cell and the completion "
        "of the three coordination processes.", "6.2 (Figure 3)", data="figure3_outcomes.csv"),
    "figure3_outcomes.csv": S(
        "Outcome types", "Successes and the five failure types per model and condition.",
        "4.3, 6.2"),
    "figure3_processes.csv": S(
        "Coordination processes", "Role identification, holder contacted, information "
        "acquisition and execution, with actions and cost.", "4.2, 6.2-6.3"),
    "incognita_trials.csv": S(
        "Trials", "One row per trial: success, failure type and process scores.", "4"),
    "analyses.csv": S(
        "Analyses run", "Which of the paper's analyses this run could compute, and why not "
        "otherwise.", "5-6"),
    "results.csv": S(
        "Results per episode and seat", "Every trial with its success, database check, turns "
        "and messages.", "3.3"),
}
