"""What `confide eval` needs to know of a benchmark, declared by the benchmark itself.

Each benchmark folder that takes part in `confide eval` has an `eval_design.py` with one
`EvalDesign` named `DESIGN`: where the evaluated model sits (its lineup), what the other
roles default to, the `quick` design (a stratified subset of a suite, every condition,
fixed seeds), where the paper's design lives (an experiment file, with the fields taken
from the paper's text when the file is absent), the headline metrics with the axis each
belongs to, and what the benchmark does not measure. `confide.evaluate` reads these and
knows no benchmark by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

MODEL = "{model}"
"""In a lineup or a role default: the evaluated model spec."""

Axis = Literal["coordination", "privacy"]


@dataclass(frozen=True)
class EvalMetric:
    """One headline number: the mean over tasks of `column` of `table` in the run
    directory (each task's rows averaged first), optionally one number per combination of
    the values of the `by` columns (e.g. per cost setting and condition). `published`
    names the key of the papers' published rows it is compared with
    (`confide.core.published`)."""

    name: str
    label: str
    axis: Axis
    column: str
    table: str = "results.csv"
    by: tuple[str, ...] = ()
    task_column: str = "task_id"
    scale: float = 1.0
    higher_is_better: bool = True
    published: str | None = None
    meaning: str = ""


@dataclass(frozen=True)
class QuickDesign:
    """The quick design: `per_stratum` tasks of `suite` from each stratum (`stratum` of a
    task), chosen by a seeded shuffle, every condition, `repetitions` each, and the
    options that keep an episode short enough for an offline model."""

    suite: str | None
    stratum: Callable[[Any], str]
    per_stratum: int
    seed: int = 0
    repetitions: int = 1
    options: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""
    embedded: QuickDesign | None = None
    """The quick design for an embedded `local/` model, which runs on the CPU one call at
    a time (a 1,800-token CalBench prompt took 15 s of CPU on one thread): fewer tasks
    and shorter episodes, every condition kept, so an offline evaluation is bounded by a
    few hundred calls (docs/eval.md has the timings). Its `why` says what differs; None:
    the same design as for any other model."""


@dataclass(frozen=True)
class EvalDesign:
    """A benchmark's part of `confide eval` (module docstring)."""

    benchmark: str
    lineup: str
    """The evaluated lineup, `{model}` standing for the model spec (one spec: every seat)."""
    reference_lineup: str
    """The lineup `confide eval reference` runs: the benchmark's reference participants."""
    roles: Mapping[str, str]
    """Role -> default binding for a model under evaluation (`{model}`: the same model);
    roles left out keep the benchmark's own default."""
    role_notes: Mapping[str, str]
    """Role -> why its default is what it is (the profile states it)."""
    quick: QuickDesign
    paper_file: str
    """The paper's design as an experiment file, relative to the project root."""
    paper: Mapping[str, Any]
    """The paper's design as experiment fields, from the paper's text, used when
    `paper_file` is absent (lineups and roles are the evaluated model's)."""
    paper_note: str
    """What the paper's design is, in one sentence, with the section it comes from."""
    metrics: tuple[EvalMetric, ...]
    published_settings: Mapping[str, str] = field(default_factory=dict)
    """A metric's `by` column -> the setting key of the papers' published rows that names
    the same thing (e.g. `cost_setting` -> `Setting`): a published row sits on a group
    when each such setting it has equals the group's value."""
    no_privacy: str = ""
    """Why the benchmark has no privacy metric (empty when it has one)."""
    others_role: str = ""
    """A name `--role` may bind besides the benchmark's roles: every seat but the first
    (the evaluated one) plays that spec, e.g. `--role calbench.others=imap`; empty: the
    benchmark's lineup has no other seats to bind."""
    seat_column: str = ""
    """The metric tables' column naming each row's seat spec: a profile counts the
    evaluated model's seats only (every seat in self-play; the first when the other
    seats are bound); empty: every row is the evaluated model's."""
    worst: tuple[str, bool] = ("success", True)
    """(results.csv column, ascending) ordering episodes worst first for the profile's links."""
