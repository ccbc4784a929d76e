"""Every reported metric with a one-line definition and the paper section it comes from.

One source for the viewer's Glossary page and the column definitions in report.html. Each
benchmark declares its own terms (`Declaration.glossary`, in `envs/<id>/declaration.py` or
a plugin's declaration); this module only gathers them. Keys are column names as they
appear in summary.csv and results.csv.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from confide.registry import catalog, known_declaration


@dataclass(frozen=True)
class Term:
    """One metric of one benchmark: the column it appears as, its definition and its paper
    section."""

    benchmark: str
    column: str
    name: str
    definition: str
    section: str


def glossary() -> list[Term]:
    """The terms of every installed benchmark, by benchmark id then in declared order (a
    plugin that cannot be loaded contributes none; `confide benchmarks` names it)."""
    return [
        Term(entry.id, t.column, t.name, t.definition, t.section)
        for entry in catalog()[0]
        for t in entry.glossary
    ]


def glossary_for(benchmark: str) -> dict[str, Term]:
    """Column -> term for one benchmark (none for a benchmark not installed)."""
    found = known_declaration(benchmark)
    terms = found.glossary if found is not None else ()
    return {t.column: Term(benchmark, t.column, t.name, t.definition, t.section) for t in terms}


def glossary_json() -> list[dict[str, str]]:
    """The glossary as plain dicts (the viewer's data)."""
    return [asdict(t) for t in glossary()]
