"""What the shared layers show of CalBench (`confide.declaration`): its catalog entry,
the metrics of its tables (the CalBench paper §4.2, §3.2, appendix F.3, Tables 1 and 2),
its headline figures (§1 and §4.2's coordination-privacy frontier, Figure 2's privacy-cost
plane) and `confide leaderboard` (appendix D.4, E). Imports nothing of the environment."""

from __future__ import annotations

from confide.declaration import Command, Declaration, GroupedBars, PanelScatter, Scatter
from confide.declaration import Term as T

GLOSSARY = (
    T("Coord.", "Coordination (%)", "100 x the share of a seat's meetings that were "
      "scheduled, over seats attending at least one meeting (S_i).", "4.2"),
    T("coordination", "Coordination", "Scheduled meetings / required meetings for the "
      "seat in this game (S_{g,i}).", "4.2"),
    T("success", "Success", "Scheduled / required meetings of the seat.", "4.2"),
    T("Excess", "Excess cost", "Mean max(0, c_real - c_oracle): displacement cost above "
      "the CP-SAT oracle's schedule (C_i).", "4.2"),
    T("excess", "Excess cost", "max(0, c_real - c_oracle) for the seat.", "4.2"),
    T("excess_cost", "Excess cost", "max(0, c_real - c_oracle) for the seat.", "4.2"),
    T("signed_excess", "Signed excess", "c_real - c_oracle (e_{g,i}); negative when the "
      "seat paid less than in the oracle schedule.", "4.2"),
    T("adj_cost", "Adjusted cost", "Excess plus missed meetings weighted by their cost, "
      "per required meeting (C_i^adj).", "4.2"),
    T("Msgs.", "Messages per meeting", "Messages sent per successfully scheduled "
      "participant-meeting (E_i).", "4.2"),
    T("messages_per_meeting", "Messages per meeting", "Messages sent / max(scheduled, 1) "
      "(E_{g,i}).", "4.2"),
    T("Fair.", "Fairness cost", "Mean |e_{g,i} - mean_j e_{g,j}|: how unevenly the "
      "excess burden falls on the seats of a game.", "4.2"),
    T("fairness", "Fairness cost", "|e_{g,i} - mean_j e_{g,j}| for the seat.", "4.2"),
    T("VPS", "Excess VPS", "Mean belief movement about a seat's calendar beyond the "
      "five-slot floor, per seat-game (V_i).", "3.2, F.3"),
    T("excess_vps", "Excess VPS", "max(0, VPS loss of the seat as a target - floor); VPS "
      "sums |posterior - prior| of every observer's belief about each slot.", "3.2, F.3"),
    T("N", "Games", "Number of games in the group.", "Table 2"),
    T("Seats", "Seat-games", "Number of seat-games in the group (Table 1's N).", "Table 1"),
    T("Meetings", "Meetings scheduled", "Mean meetings successfully scheduled per "
      "seat-game.", "Table 1"),
)

DECLARATION = Declaration(
    id="calbench",
    spec="confide.envs.calbench.spec:SPEC",
    description="N assistants with private calendars schedule a stream of meetings "
    "(success, excess cost vs a CP-SAT oracle, messages, fairness).",
    suites=("canonical", "tiny"),
    participants=("imap", "sdmap", "dsm-welfare", "dsm-private"),
    conditions=("dm", "participant-groupchat", "all-agent-groupchat"),
    glossary=GLOSSARY,
    figures=(
        Scatter("Coordination-privacy frontier", x="VPS", y="Coord.",
                xlabel="excess VPS (lower leaks less)",
                ylabel="coordination (% meetings scheduled)", color_by="Method",
                marker_by="Condition", ylim=(-5.0, 105.0), published_in="Condition"),
        PanelScatter("Figure 2: privacy-cost plane", x="VPS", y="Excess",
                     xlabel="excess VPS", ylabel="excess cost", panel_by="Setting",
                     label_by=("Method", "Condition"), published_in="Condition"),
        GroupedBars("Coordination and VPS per condition",
                    values=(("Coord.", "coordination (%)"), ("VPS", "excess VPS")),
                    group_by="Condition", series_by="Method"),
    ),
    commands=(
        Command("leaderboard", "confide.envs.calbench.cli:leaderboard",
                "CalBench only: rate models with OpenSkill score-margin updates; list "
                "reference\nprotocols by raw metrics."),
    ),
)
