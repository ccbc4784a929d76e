"""Every reported metric with a one-line definition and the paper section it comes from.

One source for the viewer's Glossary page and the column definitions in report.html.
Keys are column names as they appear in summary.csv and results.csv; sections refer to
the paper specs (calbench.md, sotopia_tom.md, incognita.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Term:
    """One metric: the column it appears as, its definition and its paper section."""

    benchmark: str
    column: str
    name: str
    definition: str
    section: str


def _terms(benchmark: str, rows: list[tuple[str, str, str, str]]) -> list[Term]:
    return [Term(benchmark, column, name, text, section) for column, name, text, section in rows]


GLOSSARY: tuple[Term, ...] = (
    *_terms("calbench", [
        ("Coord.", "Coordination (%)", "100 x the share of a seat's meetings that were "
         "scheduled, over seats attending at least one meeting (S_i).", "4.2"),
        ("coordination", "Coordination", "Scheduled meetings / required meetings for the "
         "seat in this game (S_{g,i}).", "4.2"),
        ("success", "Success", "Scheduled / required meetings of the seat.", "4.2"),
        ("Excess", "Excess cost", "Mean max(0, c_real - c_oracle): displacement cost above "
         "the CP-SAT oracle's schedule (C_i).", "4.2"),
        ("excess", "Excess cost", "max(0, c_real - c_oracle) for the seat.", "4.2"),
        ("excess_cost", "Excess cost", "max(0, c_real - c_oracle) for the seat.", "4.2"),
        ("signed_excess", "Signed excess", "c_real - c_oracle (e_{g,i}); negative when the "
         "seat paid less than in the oracle schedule.", "4.2"),
        ("adj_cost", "Adjusted cost", "Excess plus missed meetings weighted by their cost, "
         "per required meeting (C_i^adj).", "4.2"),
        ("Msgs.", "Messages per meeting", "Messages sent per successfully scheduled "
         "participant-meeting (E_i).", "4.2"),
        ("messages_per_meeting", "Messages per meeting", "Messages sent / max(scheduled, 1) "
         "(E_{g,i}).", "4.2"),
        ("Fair.", "Fairness cost", "Mean |e_{g,i} - mean_j e_{g,j}|: how unevenly the "
         "excess burden falls on the seats of a game.", "4.2"),
        ("fairness", "Fairness cost", "|e_{g,i} - mean_j e_{g,j}| for the seat.", "4.2"),
        ("VPS", "Excess VPS", "Mean belief movement about a seat's calendar beyond the "
         "five-slot floor, per seat-game (V_i).", "3.2, F.3"),
        ("excess_vps", "Excess VPS", "max(0, VPS loss of the seat as a target - floor); VPS "
         "sums |posterior - prior| of every observer's belief about each slot.", "3.2, F.3"),
        ("N", "Games", "Number of games in the group.", "Table 2"),
        ("Seats", "Seat-games", "Number of seat-games in the group (Table 1's N).", "Table 1"),
        ("Meetings", "Meetings scheduled", "Mean meetings successfully scheduled per "
         "seat-game.", "Table 1"),
    ]),
    *_terms("sotopia-tom", [
        ("DA", "Disclosure alignment", "How well agents shared what their sharing policy "
         "says to share, with the intended recipients.", "4.1, A.7"),
        ("IA", "Inquiry alignment", "How well agents asked the right holders for the "
         "knowledge they were missing.", "4.1, A.7"),
        ("EFF", "Efficiency", "How early agents acquired the knowledge they needed "
         "(earliest round of acquisition, normalized).", "4.1, A.7"),
        ("CPV", "Critical privacy violation rate", "Violations (public leaks of private "
         "items, exposure to forbidden recipients, forbidden requests) per protected item, "
         "capped at 1. Lower is better.", "4.1, A.7"),
        ("InfoMgmt", "Information management", "Geometric mean of DA, IA, 1 - CPV and EFF.",
         "4.1"),
        ("da", "Disclosure alignment", "DA of the episode.", "4.1, A.7"),
        ("ia", "Inquiry alignment", "IA of the episode.", "4.1, A.7"),
        ("eff", "Efficiency", "EFF of the episode.", "4.1, A.7"),
        ("cpv", "Critical privacy violation rate", "CPV of the episode.", "4.1, A.7"),
        ("infomgmt", "Information management", "InfoMgmt of the episode.", "4.1"),
        ("violations", "Violations", "Violation events counted for CPV in the episode.",
         "4.1, A.7"),
        ("protected_items", "Protected items", "Items whose disclosure can be a critical "
         "violation (CPV's denominator).", "A.7"),
        ("any_violation", "Episodes with a violation", "Share of episodes with at least "
         "one violation.", "6.1"),
        ("stale", "Stale episodes", "Share of episodes with EFF = 0 (nothing acquired).",
         "6.3"),
        ("failed_verdicts", "Failed verdicts", "Episodes with a judge verdict that failed; "
         "each such metric is left out of its mean, never counted as 0.", "A.7"),
        ("private_share", "Private share", "Share of sent messages that went to a private "
         "channel (DM or group) rather than the public one.", "6.3"),
        ("refused_per_episode", "Refused turns", "Turns per episode refused for unreadable "
         "output or bad recipients (the schema failures section 6 reports).", "6"),
    ]),
    *_terms("incognita", [
        ("success", "Task success", "1 when the final database equals the gold one and "
         "every required output was given.", "3.3"),
        ("db_pass", "Database match", "Final database hash equals the gold hash.", "3.3"),
        ("outputs_pass", "Outputs given", "Every required output reached the customer "
         "(blank when the task has none).", "3.3"),
        ("gate_releases", "Disclosure releases", "Customer facts the disclosure gate "
         "released to the agent (information acquisition).", "4.2"),
        ("executed_calls", "Executed calls", "Tool calls executed in the service world.",
         "3.3, 4.2"),
        ("rejected_calls", "Rejected calls", "Tool calls proposed but not executed.", "3.3"),
        ("turns", "Turns", "Agent turns in the episode (one directed message each).", "3.3"),
        ("cost_usd", "Cost (USD)", "Model spend of the episode, all roles.", "6.3"),
    ]),
)


def glossary_for(benchmark: str) -> dict[str, Term]:
    """Column -> term for one benchmark."""
    return {t.column: t for t in GLOSSARY if t.benchmark == benchmark}


def glossary_json() -> list[dict[str, str]]:
    """The glossary as plain dicts (the viewer's data)."""
    return [asdict(t) for t in GLOSSARY]
