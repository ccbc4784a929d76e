"""CalBench's output files in report.html (core/viewing.ReportSection): what each shows,
in words, and where the paper defines it (CalBench paper)."""

from __future__ import annotations

from confide.core.viewing import ReportSection as S

SECTIONS: dict[str, S] = {
    "game_summary.csv": S(
        "VPS per game", "Each game's protocol-semantic privacy loss: pair-rounds observed, "
        "total and mean VPS, and the number of belief updates.", "F.5"),
    "game_target_summary.csv": S(
        "VPS per game and target", "How much each agent's calendar was revealed in a game, "
        "and the excess over the five-slot floor that the headline VPS averages.", "F.5"),
    "pair_round_vps.csv.gz": S(
        "VPS per observer, target and round", "How far each observer's beliefs about each "
        "target's calendar moved towards the truth in each round.", "F.5"),
    "belief_evidence.csv.gz": S(
        "Belief updates", "Every belief update the typed messages caused: who learned what "
        "about whose slot, from which message, before and after.", "F.1-F.2, F.5"),
    "g1_completion_regret.csv": S(
        "Completion and regret", "How often a seat completed all its meetings, and the excess "
        "cost per meeting it paid doing so.", "G.1"),
    "g2_first_speaker_tests.csv": S(
        "First-speaker effects", "Paired tests of whether speaking first in a round changes "
        "a seat's excess VPS and excess cost.", "G.2"),
    "g2_first_speaker_units.csv": S(
        "First-speaker units", "One row per seat and round, the units the first-speaker tests "
        "pair.", "G.2"),
    "g3_messages_by_meeting.csv": S(
        "Messages by meeting position", "Messages per seat by the meeting's place in the "
        "stream.", "G.3"),
    "g3_messages_by_speaker_role.csv": S(
        "Messages by speaker role", "Messages per agent-meeting for first speakers and the "
        "others.", "G.3"),
    "g4_prior_meeting_reschedules.csv": S(
        "Prior meetings rescheduled", "How often seats moved a meeting already scheduled.",
        "G.4"),
    "own_slot_disclosure_summary.csv": S(
        "Own-slot disclosure rates", "How often text messages proposed, offered or priced the "
        "sender's own slots.", "G.5"),
    "own_slot_disclosure.csv": S(
        "Own-slot disclosures", "Each text message that disclosed the sender's own slots.",
        "G.5"),
    "semantic_leakage_summary.csv": S(
        "Semantic leakage", "How many private calendar labels reached an agent not entitled "
        "to them, by sensitivity tier.", "3, 4.2"),
    "semantic_leakage.csv": S(
        "Semantic leaks", "Each message that carried a private label to someone outside its "
        "audience, with the matched words.", "3, 4.2"),
    "metric_comparison.csv": S(
        "Judge against reflection", "VPS measured by the external judge beside the "
        "self-reflection measure.", "I.3"),
    "judge_precision_summary.csv": S(
        "Judge precision", "How often the judge's belief shifts point towards the truth.",
        "I.4"),
    "judge_vs_reflection_precision.csv": S(
        "Judge and reflection precision", "Truth-direction precision of both measures, side by "
        "side.", "I.4"),
    "judge_more_precise_than_reflection.csv": S(
        "Where the judge is more precise", "Cells where the judge's precision beats the "
        "reflection's.", "I.4"),
    "judge_reflection_cell_agreement.csv": S(
        "Cell agreement", "Agreement of the judge and the reflection on each belief cell.",
        "I.5"),
    "judge_reflection_agreement.csv": S(
        "Agreement statistics", "Agreement statistics of the judge and the reflection.", "I.5"),
    "results.csv": S(
        "Results per episode and seat", "Every seat of every game with its coordination, "
        "cost, message and privacy values.", "4.2"),
    "figures/figure3_communication_efficiency.png": S(
        "Communication efficiency per model", "Messages per successful participant-meeting "
        "against excess cost, one point per model seat and game, with each model's "
        "least-squares line.", "4.3 (Figure 3)", data="figure3_communication_efficiency.csv"),
    "figure3_communication_efficiency.csv": S(
        "Communication efficiency per model (data)", "Seat-games, slope and intercept of each "
        "model's fit.", "4.3 (Figure 3)"),
    "figures/figure4_fairness.png": S(
        "Fairness by model and cost setting", "Mean fairness cost with a 95% interval across "
        "task instances.", "4.3 (Figure 4)", data="figure4_fairness.csv"),
    "figure4_fairness.csv": S(
        "Fairness by model and cost setting (data)", "Mean, interval and task count per model "
        "and setting.", "4.3 (Figure 4)"),
}
