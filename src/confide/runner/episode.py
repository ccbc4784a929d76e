"""One episode into its trace file: the unit every backend runs (the local runner in
`execute`, the Ray workers in `ray_backend`)."""

from __future__ import annotations

import asyncio
import contextlib
import traceback
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any

from confide.core.benchmark import BenchmarkSpec, EpisodeContext, EpisodeResult, SeatSpec
from confide.core.trace import (
    EpisodeEnd,
    EpisodeStart,
    TraceError,
    TraceRecorder,
    TraceWriter,
    read_trace,
    trace_file,
)
from confide.runner.config import Experiment
from confide.runner.expand import EpisodePlan
from confide.runner.journal import EpisodeJournal, pays
from confide.runner.metadata import run_metadata
from confide.runner.models import RunModels
from confide.runner.rundir import run_dir_of
from confide.runner.spend import episode_spend


async def run_episode(
    spec: BenchmarkSpec,
    plan: EpisodePlan,
    experiment: Experiment,
    trace_dir: Path,
    models: RunModels,
    fingerprint: dict[str, str],
    stop: asyncio.Event,
    placement: Mapping[str, str] | None = None,
    meta: Mapping[str, Any] | None = None,
    journal_dir: Path | None = None,
) -> EpisodeEnd | None:
    """Run one episode into its trace file and return its slim footer (`slim`); an
    exception becomes a failed footer (the run goes on). When `stop` is set first, the
    episode is cancelled, its partial trace removed, and None returned. The header is
    `episode_start`'s. Given `journal_dir`, every answered model call is journaled there
    and the answers an earlier attempt journaled are replayed (`runner.journal`); the
    journal is removed once the episode finished ok."""
    roles = [SeatSpec(spec) for spec in experiment.roles.values()]
    modes = await models.structured_output([*plan.lineup, *roles])
    connections = models.connections([*plan.lineup, *roles])
    # opening a file can take a millisecond on slow disks: do it off the event loop
    writer = await asyncio.to_thread(TraceWriter, trace_dir, plan.episode_id)
    writer.emit(
        episode_start(spec, plan, experiment, fingerprint, placement, meta, modes, connections)
    )
    journal = None
    if journal_dir is not None and any(pays(seat.model) for seat in [*plan.lineup, *roles]):
        journal = await asyncio.to_thread(
            EpisodeJournal.open, journal_dir, plan.episode_id, fingerprint
        )
    ctx = episode_context(spec, plan, experiment, writer, models)
    with journal.scope() if journal is not None else contextlib.nullcontext():
        body = asyncio.ensure_future(spec.run_episode(ctx))  # the task keeps the scope
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait((body, stopped), return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if not body.done():
        body.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):  # let it unwind
            await body
        await asyncio.to_thread(writer.discard)
        if journal is not None:
            await asyncio.to_thread(journal.close)
        return None
    footer = with_spend(spec, await ended(body), writer.events)
    # fsync + rename off the event loop, so one episode's disk flush never stalls the others
    await asyncio.to_thread(writer.finish, footer)
    if journal is not None:  # after the trace is in place: it then holds every call
        await asyncio.to_thread(journal.settle, footer.status == "ok")
    return slim(footer)


def episode_start(
    spec: BenchmarkSpec,
    plan: EpisodePlan,
    experiment: Experiment,
    fingerprint: dict[str, str],
    placement: Mapping[str, str] | None = None,
    meta: Mapping[str, Any] | None = None,
    modes: Mapping[str, str] | None = None,
    connections: Mapping[str, int] | None = None,
) -> EpisodeStart:
    """The trace header of `plan`: what the episode is, each model's structured-output
    mode and connection limit (models with one), the sampling settings, the run metadata
    (`meta`: versions, start, CPU count) and, given one, where the episode ran."""
    meta = meta if meta is not None else run_metadata()
    return EpisodeStart(
        episode_id=plan.episode_id,
        benchmark=spec.id,
        scenario_id=plan.task.id,
        seed=plan.seed,
        lineup=[str(s) for s in plan.lineup],
        condition=plan.condition,
        config={
            "repetition": plan.repetition,
            "roles": experiment.roles,
            "options": experiment.options,
            **({"structured_output": dict(modes)} if modes else {}),
            **({"max_connections": dict(connections)} if connections else {}),
            **({"placement": dict(placement)} if placement else {}),
            **({"sampling": _sampling(experiment)} if experiment.sampling else {}),
            "host": {k: v for k, v in meta.items() if k != "versions"},
        },
        versions=dict(meta["versions"]),
        fingerprint=fingerprint,
    )


def episode_context(
    spec: BenchmarkSpec,
    plan: EpisodePlan,
    experiment: Experiment,
    trace: TraceRecorder,
    models: RunModels,
) -> EpisodeContext:
    """The context `plan` is played in, and rescored in (`runner.rescore`): one place, so
    a rescore's judge gets the same roles, options and sampling settings as the run's."""
    return EpisodeContext(
        episode_id=plan.episode_id,
        task=plan.task,
        lineup=plan.lineup,
        seed=plan.seed,
        trace=trace,
        model_factory=models,
        condition=plan.condition,
        roles=dict(experiment.roles),
        options=dict(experiment.options),
        sampling=dict(experiment.sampling),
        seat_names=frozenset(spec.seats(plan.task)),
        trace_path=str(trace_file(run_dir_of(experiment) / "traces", plan.episode_id)),
    )


async def ended(work: Awaitable[EpisodeResult]) -> EpisodeEnd:
    """The footer of an episode played (or rescored) by `work`: its result, or status
    error with the exception it raised (one broken episode must not take down the run)."""
    try:
        done = await work
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return EpisodeEnd(status="error", error=detail)
    return EpisodeEnd(
        rows=done.rows, metrics=done.metrics, final_state=done.final_state, tables=done.tables
    )


def _sampling(experiment: Experiment) -> dict[str, dict[str, Any]]:
    return {key: value.overrides() for key, value in experiment.sampling.items()}


def with_spend(spec: BenchmarkSpec, footer: EpisodeEnd, events: Sequence[Any]) -> EpisodeEnd:
    """`footer` carrying what the episode of `events` spent and its invalid replies (a
    failed episode's too: every call recorded before it failed)."""
    invalid = spec.invalid_replies(events) if spec.invalid_replies is not None else None
    return footer.model_copy(update={"spend": episode_spend(events, invalid)})


def slim(footer: EpisodeEnd) -> EpisodeEnd:
    """The part of a footer the run keeps until it is spooled: status, error, result rows,
    the episode's tables and spend (the final state and metrics stay in the trace file)."""
    return EpisodeEnd.model_construct(
        status=footer.status, error=footer.error, rows=footer.rows, tables=footer.tables,
        spend=footer.spend,
    )


def load_complete(
    path: Path, spec: BenchmarkSpec | None = None
) -> tuple[EpisodeStart, EpisodeEnd] | None:
    """The header and slim footer of the trace at `path` if it holds a finished,
    successful episode (never through a symlink: a run reuses only files it wrote), with
    its spend read from its events when `spec` is given."""
    if path.is_symlink() or not path.exists():
        return None
    try:
        trace = read_trace(path)
    except TraceError:
        return None
    footer = trace.footer
    if footer is None or footer.status != "ok":
        return None
    return trace.header, slim(footer if spec is None else with_spend(spec, footer, trace.events))
