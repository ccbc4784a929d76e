"""What confide's shared layers show of `rendezvous`, declared without importing it: the
catalog entry of `confide benchmarks`, the glossary of its columns (the viewer's Glossary
page and report.html's definitions), and its headline figure. The `confide.benchmarks`
entry point names this object; `spec` names the benchmark itself, imported when it runs.
The terms cite no paper section (the benchmark has no paper), so none is shown.
Its report section (`meetings.csv`) is declared on the spec's view hooks, next to the
output hook that writes the file (`rendezvous.py`)."""

from __future__ import annotations

from confide.declaration import Declaration, MetricBars, Term

DECLARATION = Declaration(
    id="rendezvous",
    spec="confide_example.rendezvous:SPEC",
    description="Seats with private free days agree on a meeting day (success vs disclosure); "
    "an example plugin.",
    suites=("default",),
    participants=("earliest", "open"),
    glossary=(
        Term("success", "Met", "Share of episodes that agreed on a day free for every seat.",
             ""),
        Term("disclosure", "Disclosure", "Share of a seat's free days it offered (lower "
             "reveals less of its calendar).", ""),
        Term("offers", "Offers", "Offers a seat sent (messages to all the others).",
             ""),
        Term("episodes", "Episodes", "Episodes the participant played.", ""),
        Term("agreed", "Agreed", "The latest offers of all seats shared a day.",
             ""),
        Term("day", "Day", "The agreed day (blank without agreement).", ""),
    ),
    figures=(
        MetricBars("Rendezvous: success and disclosure per participant",
                   metrics=("success", "disclosure"), label_by=("participant",),
                   ylabel="share (disclosure: lower reveals less)"),
    ),
)
