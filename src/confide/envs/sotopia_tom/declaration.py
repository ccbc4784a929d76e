"""What the shared layers show of Sotopia-ToM (`confide.declaration`): its catalog entry,
the metrics of its tables (the Sotopia-ToM paper §4.1, §6, appendix A.7), the headline
figure of Table 2's five metrics, and its commands `confide scenarios` (§3.2) and `confide
judge` (Table 6). Imports nothing of the environment."""

from __future__ import annotations

from confide.declaration import Command, Declaration, MetricBars
from confide.declaration import Term as T

GLOSSARY = (
    T("DA", "Disclosure alignment", "How well agents shared what their sharing policy "
      "says to share, with the intended recipients.", "4.1, A.7"),
    T("IA", "Inquiry alignment", "How well agents asked the right holders for the "
      "knowledge they were missing.", "4.1, A.7"),
    T("EFF", "Efficiency", "How early agents acquired the knowledge they needed "
      "(earliest round of acquisition, normalized).", "4.1, A.7"),
    T("CPV", "Critical privacy violation rate", "Violations (public leaks of private "
      "items, exposure to forbidden recipients, forbidden requests) per protected item, "
      "capped at 1. Lower is better.", "4.1, A.7"),
    T("InfoMgmt", "Information management", "Geometric mean of DA, IA, 1 - CPV and EFF.",
      "4.1"),
    T("da", "Disclosure alignment", "DA of the episode.", "4.1, A.7"),
    T("ia", "Inquiry alignment", "IA of the episode.", "4.1, A.7"),
    T("eff", "Efficiency", "EFF of the episode.", "4.1, A.7"),
    T("cpv", "Critical privacy violation rate", "CPV of the episode.", "4.1, A.7"),
    T("infomgmt", "Information management", "InfoMgmt of the episode.", "4.1"),
    T("violations", "Violations", "Violation events counted for CPV in the episode.",
      "4.1, A.7"),
    T("protected_items", "Protected items", "Items whose disclosure can be a critical "
      "violation (CPV's denominator).", "A.7"),
    T("any_violation", "Episodes with a violation", "Share of episodes with at least "
      "one violation.", "6.1"),
    T("stale", "Stale episodes", "Share of episodes with EFF = 0 (nothing acquired).",
      "6.3"),
    T("failed_verdicts", "Failed verdicts", "Episodes with a judge verdict that failed; "
      "each such metric is left out of its mean, never counted as 0.", "A.7"),
    T("private_share", "Private share", "Share of sent messages that went to a private "
      "channel (DM or group) rather than the public one.", "6.3"),
    T("refused_per_episode", "Refused turns", "Turns per episode refused for unreadable "
      "output or bad recipients (the schema failures section 6 reports).", "6"),
)

DECLARATION = Declaration(
    id="sotopia-tom",
    spec="confide.envs.sotopia_tom.spec:SPEC",
    description="Multi-party information sharing with public and private channels: "
    "DA, IA, EFF, CPV and InfoMgmt (Sotopia-ToM).",
    suites=("core",),
    participants=("reference", "leaky"),
    glossary=GLOSSARY,
    figures=(
        MetricBars("Sotopia-ToM metrics per model and strategy",
                   metrics=("DA", "IA", "EFF", "CPV", "InfoMgmt"),
                   label_by=("model", "strategy"), ylabel="score (CPV: lower is better)"),
    ),
    commands=(
        Command("scenarios", "confide.envs.sotopia_tom.cli.scenarios:app",
                "Sotopia-ToM only: validate and generate scenario files."),
        Command("judge", "confide.envs.sotopia_tom.cli.judge:app",
                "Sotopia-ToM only: judge reliability tools."),
    ),
)
