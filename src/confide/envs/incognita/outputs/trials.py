"""One analysis row per trial: identity, outcome, reader processes, failure label, counts.

This is the join of the evaluator's verdict (from the trace footer) with the model-free
reader (section 4.2), the failure label (4.3) and the counts (6.2-6.3). Tables and figures
(`tables`, `figures`) are functions of these rows only, so a run can be re-analysed from
``incognita_trials.csv`` without its traces.

Where the environment records what the reader needs:

- the condition, the task and the evaluated lineup: the trace header (``condition``,
  ``scenario_id``, ``lineup``) and the repetition: ``header.config["repetition"]``;
- success: the footer's episode metrics (``success``), else the ``evaluation`` event; the
  database and output-assertion channels separately (``db_pass``, ``outputs_pass``) from
  the ``evaluation`` event, for the database-only recompute of appendix B.2;
- the reader audit of appendix B.2 (non-reference reads, labels after crediting them):
  `audit.audit_reads`;
- the social desk-to-role map: ``desk_roles`` (desk name -> role) in the environment's
  ``episode_setup`` event;
- a trial of the native arm has its verdict, channels, actions and costs only
  (`native_row`).

Decision: the *model* of a trial is its lineup text (the evaluated agent's model spec, or
a reference participant's name), which is what distinguishes the arms of a comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from confide.core.tables import read_table, write_table
from confide.core.trace import Trace
from confide.envs.incognita.conditions import AGENT, NATIVE
from confide.envs.incognita.events import EpisodeSetup, Evaluated
from confide.envs.incognita.outputs.audit import audit_reads
from confide.envs.incognita.outputs.failures import FailureType, label_failure, trial_counts
from confide.envs.incognita.outputs.reader import read_trial, trial_events
from confide.envs.incognita.reference import (
    CoordinationReference,
    ReferenceDataError,
)

SCHEMA_VERSION = 2
TRIALS_FILE = "incognita_trials.csv"
PROCESSES: tuple[str, ...] = (
    "role_identification",
    "holder_contacted",
    "information_acquisition",
    "execution",
)
"""The per-trial process shares (section 4.2); ``execution`` is named assignment outside
direct access."""


class TrialRow(BaseModel):
    """The analysis of one trial."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    episode_id: str
    task: str
    model: str
    condition: str
    repetition: int
    success: bool
    failure: FailureType | None
    role_identification: float | None
    holder_contacted: float | None
    information_acquisition: float | None
    execution: float | None
    missing_customer: int
    missing_service: int
    unanswerable_questions: int | None
    agent_actions: int
    cost_agent: float | None
    """USD; None when any of the agent's calls has no price."""
    cost_total: float | None
    """USD; None when any call of the episode has no price."""
    unpriced_calls: int = 0
    db_pass: bool | None = None
    """The database channel alone (None: the trace records no evaluation event)."""
    outputs_pass: bool | None = None
    """The output-assertion channel (None: not operative for this card)."""
    nonreference_reads: int = 0
    lenient_failure: FailureType | None = None
    """Label under appendix B.2's lenient credit; None when the audit does not apply."""
    strict_failure: FailureType | None = None
    """Label under appendix B.2's strict credit; None when the audit does not apply."""


def trace_success(trace: Trace) -> bool:
    """The evaluator's verdict: the footer's ``success`` metric, else the ``evaluation``
    event."""
    footer = trace.footer
    if footer is None:
        raise ReferenceDataError(f"{trace.path}: trace is incomplete (no footer)")
    value = footer.metrics.get("success")
    if value is None:
        value = next((e.data.success for e in trace.of(Evaluated)), None)
    if not isinstance(value, bool | int | float):
        raise ReferenceDataError(f"{trace.path}: the trace records no success verdict")
    return bool(value)


def desk_roles(trace: Trace) -> dict[str, str] | None:
    """The trial's social desk-to-role map, as the environment's setup event records it."""
    for event in trace.of(EpisodeSetup):
        if event.data.desk_roles:
            return dict(event.data.desk_roles)
    return None


def native_row(trace: Trace, reference: CoordinationReference) -> TrialRow:
    """A trial of the native arm: its verdict, channels, actions and costs. The reader's
    processes and failure types are defined for the three Incognita conditions only
    (section 4: they read gate releases and desk exchanges, which the native harness does
    not have), so they stay absent (None), never zero."""
    header = trace.header
    counts = trial_counts(trace.events, [])
    evaluation = next((e.data for e in trace.of(Evaluated)), None)
    repetition = header.config.get("repetition", 0)
    return TrialRow(
        episode_id=header.episode_id,
        task=reference.task(header.scenario_id).card_id,
        model=",".join(header.lineup),
        condition=NATIVE,
        repetition=int(repetition) if isinstance(repetition, int) else 0,
        success=trace_success(trace),
        failure=None,
        role_identification=None,
        holder_contacted=None,
        information_acquisition=None,
        execution=None,
        missing_customer=0,
        missing_service=0,
        unanswerable_questions=None,
        agent_actions=counts.agent_actions,
        cost_agent=counts.cost_agent,
        cost_total=counts.cost_total,
        unpriced_calls=counts.unpriced_calls,
        db_pass=evaluation.db_pass if evaluation is not None else None,
        outputs_pass=evaluation.outputs_pass if evaluation is not None else None,
    )


def trial_row(trace: Trace, reference: CoordinationReference) -> TrialRow:
    """Read, label and count one complete trace against the reference."""
    header = trace.header
    condition = header.condition or ""
    if condition == NATIVE:
        return native_row(trace, reference)
    task = reference.task(header.scenario_id)
    roles = desk_roles(trace)
    events = trial_events(trace.events, condition, roles)
    reading = read_trial(task, events)
    success = trace_success(trace)
    desks = [name for name in events.holders.values() if name != AGENT]
    counts = trial_counts(trace.events, desks)
    repetition = header.config.get("repetition", 0)
    failure = label_failure(reading, success)
    audit = audit_reads(trace.events, task, events, reading, failure)
    evaluation = next((e.data for e in trace.of(Evaluated)), None)
    return TrialRow(
        episode_id=header.episode_id,
        task=task.card_id,
        model=",".join(header.lineup),
        condition=condition,
        repetition=int(repetition) if isinstance(repetition, int) else 0,
        success=success,
        failure=failure,
        role_identification=reading.role_identification,
        holder_contacted=reading.holder_contacted,
        information_acquisition=reading.information_acquisition,
        execution=reading.execution,
        missing_customer=len(reading.missing_customer),
        missing_service=len(reading.missing_service),
        unanswerable_questions=counts.unanswerable_questions,
        agent_actions=counts.agent_actions,
        cost_agent=counts.cost_agent,
        cost_total=counts.cost_total,
        unpriced_calls=counts.unpriced_calls,
        db_pass=evaluation.db_pass if evaluation is not None else None,
        outputs_pass=evaluation.outputs_pass if evaluation is not None else None,
        nonreference_reads=audit.nonreference_reads,
        lenient_failure=audit.lenient,
        strict_failure=audit.strict,
    )


def trial_rows(traces: Sequence[Trace], reference: CoordinationReference) -> list[TrialRow]:
    """`trial_row` of every complete, successful-to-run trace of the benchmark."""
    return [
        trial_row(trace, reference)
        for trace in traces
        if trace.footer is not None and trace.footer.status == "ok"
    ]


# ----- CSV round trip -------------------------------------------------------------------


def write_trials(path: Path, rows: Sequence[TrialRow]) -> Path:
    """One CSV line per trial; absent values are empty cells."""
    return write_table(path, [row.model_dump(mode="json") for row in rows])


def read_trials(path: Path) -> list[TrialRow]:
    """Rows written by `write_trials`; errors name the file, line and field."""
    rows: list[TrialRow] = []
    for line, record in enumerate(read_table(path), start=2):
        data = {key: (None if value == "" else value) for key, value in record.items()}
        try:
            rows.append(TrialRow.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ReferenceDataError(f"{path}:{line}: field {where}: {first['msg']}") from None
    return rows
