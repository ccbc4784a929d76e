"""What the shared layers show of Incognita (`confide.declaration`): its catalog entry, the
metrics of its tables (the Incognita paper §3.3, §4.2, §6.3) and `confide incognita`, the
transformation of a source benchmark's tasks (contribution 3). Its figures are its own
output files (`outputs/figures.py`), presented through `report_sections.py`. Imports
nothing of the environment."""

from __future__ import annotations

from confide.declaration import Command, Declaration
from confide.declaration import Term as T

GLOSSARY = (
    T("success", "Task success", "1 when the final database equals the gold one and "
      "every required output was given.", "3.3"),
    T("db_pass", "Database match", "Final database hash equals the gold hash.", "3.3"),
    T("outputs_pass", "Outputs given", "Every required output reached the customer "
      "(blank when the task has none).", "3.3"),
    T("gate_releases", "Disclosure releases", "Customer facts the disclosure gate "
      "released to the agent (information acquisition).", "4.2"),
    T("executed_calls", "Executed calls", "Tool calls executed in the service world.",
      "3.3, 4.2"),
    T("rejected_calls", "Rejected calls", "Tool calls proposed but not executed.", "3.3"),
    T("turns", "Turns", "Agent turns in the episode (one directed message each).", "3.3"),
    T("cost_usd", "Cost (USD)", "Model spend of the episode, all roles.", "6.3"),
)

DECLARATION = Declaration(
    id="incognita",
    spec="confide.envs.incognita.spec:SPEC",
    description="Retail service tasks under direct, one-intermediary and six-desk access.",
    suites=("incognita-retail-18",),
    participants=("reference",),
    conditions=("direct", "indirect", "social", "native"),
    glossary=GLOSSARY,
    commands=(
        Command("incognita", "confide.envs.incognita.cli:app",
                "Incognita only: convert a source benchmark's tasks into task cards."),
    ),
)
