"""Sotopia-ToM's output files in report.html (core/viewing.ReportSection): what each
shows, in words, and where the paper defines it (Sotopia-ToM paper)."""

from __future__ import annotations

from confide.core.viewing import ReportSection as S

SECTIONS: dict[str, S] = {
    "figures/figure3a_acquisition_by_round.png": S(
        "Knowledge acquired by round", "The share of desired knowledge acquired by each round: "
        "how front-loaded the exchange is.", "6.3 (Figure 3a)",
        data="figure3a_acquisition_by_round.csv"),
    "figure3a_acquisition_by_round.csv": S(
        "Knowledge acquired by round (data)", "Acquired and desired items per round.",
        "6.3 (Figure 3a)"),
    "figures/ia_failure_modes.png": S(
        "Why inquiries failed", "Failed inquiry items split into never asked, asked the wrong "
        "person and asked on the wrong channel.", "6.1", data="ia_failure_modes.csv"),
    "ia_failure_modes.csv": S(
        "Why inquiries failed (data)", "Counts and shares of the three inquiry failure modes.",
        "6.1"),
    "figures/figure22_infomgmt_by_sector.png": S(
        "InfoMgmt by sector", "The composite score per industry sector.",
        "A.11 (Figure 22)", data="figure22_infomgmt_by_sector.csv"),
    "figure22_infomgmt_by_sector.csv": S(
        "InfoMgmt by sector (data)", "Episodes and InfoMgmt per sector.", "A.11 (Figure 22)"),
    "figures/figure3bcd_behaviour_by_method.png": S(
        "Behaviour by prompting method", "Per method: the share of messages sent privately, "
        "of conversations that stalled, and of conversations with a critical privacy "
        "violation.", "6.3 (Figure 3b-d)", data="figure3bcd_behaviour_by_method.csv"),
    "figure3bcd_behaviour_by_method.csv": S(
        "Behaviour by prompting method (data)", "Private share, stale share, violation share "
        "and episodes per method.", "6.3 (Figure 3b-d)"),
    "table4_talk_rate.csv": S(
        "Interaction statistics", "Rounds, messages and talk rate (messages per agent per "
        "round).", "A.11 (Table 4)"),
    "results.csv": S(
        "Results per episode and seat", "Every seat of every scenario with its disclosure, "
        "inquiry, efficiency and violation values.", "4.1, A.7"),
}
