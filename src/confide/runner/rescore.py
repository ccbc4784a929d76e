"""`confide rescore`: score a finished run again, under another judge, without replaying
any participant.

Every trace holds the played episode, a `scoring` marker naming the roles it was scored
with, then what scoring did (`confide.core.scoring`). Rescoring takes the run's own
`experiment.yaml`, rebinds only the roles the benchmark declares as score roles
(`BenchmarkSpec.score_roles`, the judge), and for each finished episode calls the
benchmark's `score_episode` on the played part, the same function a live run calls right
after play. So a rescore gives what a run with the new judge would have given.

Nothing in the source directory is written. The result is a new run directory (`--out`,
by default the first free `<run>-rescored`, `<run>-rescored-2`, ...), refused if it exists
and is not empty or lies anywhere inside the source, with:

- `traces/`: per episode, the original header (its fingerprint and role bindings updated,
  so a later `confide run` with the new judge resumes there), the played events copied
  unchanged, the new marker, the new judge's calls and verdicts, and the new footer. The
  judge calls a rescore makes are recorded here, never appended to the source traces.
  A failed episode's trace is copied as is: it stays failed (run it again with `confide
  run` into the new directory).
- `experiment.yaml` with the new bindings, `rescore.json` (source directory, bindings
  before and after, counts, confide version, model usage), and every derived output
  rebuilt as a run builds them (`write_run_outputs`): results.csv, summary.csv, the
  benchmark's tables and figures, report.html.
- The benchmark's comparison of the new scores with the source run's
  (`BenchmarkSpec.compare_scores`; Sotopia-ToM's judge agreement, Table 6), written
  before the report so the report shows it: one rescore with a second judge gives the
  agreement between the two judges.

Before anything is written, each finished trace must carry the fingerprint this
experiment gives its episode, apart from the rebound roles and the scoring version (the
current scorer is the point), and a scoring marker; otherwise the rescore is refused with
every problem listed. Every planned episode left out (no trace, a trace cut off before
its footer) is named in the summary and `rescore.json`. A new judge's model spec is built
(not called) up front, so a typo fails at once. `experiment.yaml` stores keys and URL
passwords redacted: those model options are left out (the providers read credentials from
the environment, as the run did) and their fingerprints are taken from the traces.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confide import __version__, atomic
from confide.core.benchmark import BenchmarkSpec, SeatSpec
from confide.core.scoring import played_part, score_played
from confide.core.trace import EpisodeEnd, Trace, TraceError, TraceWriter, find_trace, read_trace
from confide.errors import ConfideError
from confide.redaction import MASK
from confide.registry import get_benchmark
from confide.runner.build import load_experiment
from confide.runner.config import Experiment, dump_experiment
from confide.runner.episode import ended, episode_context, slim, with_spend
from confide.runner.expand import EpisodePlan, expand
from confide.runner.fingerprint import episode_fingerprints
from confide.runner.models import RunModels, run_prices
from confide.runner.outputs import write_run_outputs
from confide.runner.results import ResultSpool, spend_roles
from confide.runner.rundir import LOCK_FILE, MARKER, run_lock

RECORD = "rescore.json"
_SCORING_KEYS = ("scoring_version",)
"""Fingerprint keys a rescore may change besides the rebound roles."""


class RescoreError(ConfideError):
    """A run directory cannot be rescored as asked."""


@dataclass
class RescoreSummary:
    """What a rescore produced."""

    source: Path
    run_dir: Path
    benchmark: str
    rescored: int
    kept_failed: int
    failed: dict[str, str] = field(default_factory=dict)
    """Episode -> error, for episodes whose scoring raised (new footer status error)."""
    not_rescored: dict[str, str] = field(default_factory=dict)
    """Episode -> why it is not in the rescore (no trace, a trace cut off before its
    footer, a symlink), for every planned episode left out."""
    rows: Sequence[dict[str, Any]] = field(default_factory=list)
    table: list[dict[str, Any]] = field(default_factory=list)
    comparison: list[dict[str, Any]] = field(default_factory=list)
    """The rows of the benchmark's comparison with the source run (`compare_scores`)."""


def rescore_run(
    run_dir: Path | str, *, roles: Mapping[str, str] | None = None, out: Path | str | None = None
) -> RescoreSummary:
    """Rescore the run in `run_dir` with `roles` rebound, into `out` (module docstring)."""
    return asyncio.run(rescore_run_async(run_dir, roles=roles, out=out))


async def rescore_run_async(
    run_dir: Path | str, *, roles: Mapping[str, str] | None = None, out: Path | str | None = None
) -> RescoreSummary:
    """`rescore_run` inside a running event loop."""
    source = Path(run_dir)
    if not (source / MARKER).is_file():
        raise RescoreError(f"{source} holds no run (no {MARKER})")
    experiment = load_experiment(source / MARKER)
    spec = get_benchmark(experiment.benchmark)
    rebind = dict(roles or {})
    _check_roles(spec, rebind)
    target = Path(out) if out is not None else default_target(source)
    _check_target(source, target)
    scored = experiment.model_copy(
        update={"roles": {**experiment.roles, **rebind}, "output_dir": str(target)}
    )
    plans = expand(spec, experiment)
    left_out: dict[str, str] = {}
    finished = _finished(source, spec, experiment, plans, rebind, left_out)
    options, hidden = redacted_options(scored.model_options)
    models = RunModels(cache_dir=scored.cache_dir, options=options, prices=run_prices(scored))
    for role in sorted(rebind):  # a bad model spec fails here, not in every episode
        seat = SeatSpec(rebind[role])
        if seat.model is not None:
            try:
                models.base(seat.model)
            except ConfideError as exc:
                raise RescoreError(f"--role {role}={seat}: {exc}") from None
    target.mkdir(parents=True, exist_ok=True)
    with run_lock(target):
        return await _rescore_locked(
            spec, source, target, experiment, scored, plans, finished, sorted(rebind),
            models, hidden, left_out,
        )


def default_target(source: Path) -> Path:
    """The first free `<run>-rescored`, `<run>-rescored-2`, ... next to the run."""
    base = source if source.name not in ("", ".", "..") else source.resolve()
    for number in range(1, 10_000):
        suffix = "" if number == 1 else f"-{number}"
        candidate = base.with_name(f"{base.name}-rescored{suffix}")
        if not candidate.exists():
            return candidate
    raise RescoreError(f"no free name for a rescore of {source}; give --out")


def _check_roles(spec: BenchmarkSpec, rebind: Mapping[str, str]) -> None:
    if spec.score_episode is None:
        raise RescoreError(f"{spec.id} cannot be rescored: its episodes are not scored apart")
    other = sorted(set(rebind) - set(spec.score_roles))
    if other:
        allowed = ", ".join(spec.score_roles) or "none"
        raise RescoreError(
            f"{spec.id}: --role {other[0]} takes part in play, so changing it needs a new "
            f"run (confide run); a rescore rebinds only score roles: {allowed}"
        )


def _check_target(source: Path, target: Path) -> None:
    inside, home = target.resolve(), source.resolve()
    if inside == home or inside.is_relative_to(home):
        where = "is" if inside == home else "is inside"
        raise RescoreError(
            f"--out {target} {where} the run being rescored ({source}); a rescore never "
            "writes into its source: give a directory outside it"
        )
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise RescoreError(f"--out {target} exists and is not empty; give a new directory")


@dataclass(frozen=True)
class _Finished:
    plan: EpisodePlan
    path: Path
    ok: bool


def _finished(
    source: Path,
    spec: BenchmarkSpec,
    experiment: Experiment,
    plans: list[EpisodePlan],
    rebind: Mapping[str, str],
    left_out: dict[str, str],
) -> list[_Finished]:
    """The finished episodes of the source run, in plan order, after checking that each
    trace was made under this experiment and can be cut at its scoring marker; every
    other planned episode goes to `left_out` with the reason."""
    expected = episode_fingerprints(spec.id, experiment, plans)
    free = {*_SCORING_KEYS, *(f"roles.{role}" for role in rebind)}
    free |= redacted_options(experiment.model_options)[1]
    found: list[_Finished] = []
    problems: list[str] = []
    for plan in plans:
        path = find_trace(source / "traces", plan.episode_id)
        if path.is_symlink():
            left_out[plan.episode_id] = f"{path} is a symlink (never followed)"
            continue
        if not path.exists():
            left_out[plan.episode_id] = "no trace (the episode never finished)"
            continue
        try:
            trace = read_trace(path)
        except TraceError as exc:
            problems.append(str(exc))
            continue
        if trace.footer is None:
            left_out[plan.episode_id] = f"{path} has no footer (cut off before its end)"
            continue
        ok = trace.footer.status == "ok"
        want, have = expected[plan.episode_id], trace.header.fingerprint
        differ = sorted(k for k in want.keys() | have.keys() if want.get(k) != have.get(k))
        if [k for k in differ if k not in free]:
            problems.append(
                f"{path}: made under another configuration than {source / MARKER} "
                f"(differs: {', '.join(k for k in differ if k not in free)})"
            )
        elif ok and played_part(trace.events) is None:
            problems.append(
                f"{path}: no scoring marker (written by confide "
                f"{trace.header.versions.get('confide', '?')}, before play and score were "
                "separate); run it again instead"
            )
        found.append(_Finished(plan, path, ok))
    if problems:
        shown = problems[:10] + ([f"... and {len(problems) - 10} more"] if problems[10:] else [])
        raise RescoreError("cannot rescore " + str(source) + ":\n  " + "\n  ".join(shown))
    return found


async def _rescore_locked(
    spec: BenchmarkSpec,
    source: Path,
    target: Path,
    experiment: Experiment,
    scored: Experiment,
    plans: list[EpisodePlan],
    finished: list[_Finished],
    rebound: list[str],
    models: RunModels,
    hidden: set[str],
    left_out: dict[str, str],
) -> RescoreSummary:
    started = time.time()
    if any(p.name != LOCK_FILE for p in target.iterdir()):  # filled since `_check_target`
        raise RescoreError(f"--out {target} exists and is not empty; give a new directory")
    judges = [scored.roles[role] for role in rebound]
    trace_dir = target / "traces"
    trace_dir.mkdir(parents=True, exist_ok=True)
    dump_experiment(scored, target / MARKER)
    prints = episode_fingerprints(spec.id, scored, plans)
    limit = asyncio.Semaphore(scored.episodes_at_once)

    async def one(item: _Finished) -> EpisodeEnd:
        async with limit:
            if not item.ok:
                copy = trace_dir / item.path.name
                await asyncio.to_thread(shutil.copyfile, item.path, copy)
                kept = await asyncio.to_thread(read_trace, copy)
                assert kept.footer is not None  # checked by `_finished`
                return with_spend(spec, kept.footer, kept.events)
            trace = await asyncio.to_thread(read_trace, item.path)
            return await _rescore_episode(
                spec, item.plan, trace, scored, _keep(prints[item.plan.episode_id], trace, hidden),
                trace_dir, models, judges,
            )

    footers = await asyncio.gather(*(one(item) for item in finished))
    rescored = [f for item, f in zip(finished, footers, strict=True) if item.ok]
    failed = {
        item.plan.episode_id: footer.error or ""
        for item, footer in zip(finished, footers, strict=True)
        if item.ok and footer.status != "ok"
    }
    comparison: list[dict[str, Any]] = []

    def compare(run: Path) -> None:
        if spec.compare_scores is not None:
            comparison.extend(spec.compare_scores(source, run))

    with ResultSpool(target, spend_roles(spec, scored)) as results:
        for item, footer in zip(finished, footers, strict=True):
            results.add(item.plan, footer)
        rows, table = write_run_outputs(
            spec, target, [f.plan for f in finished], results, before_report=compare
        )
    record = {
        "source": str(source.resolve()),
        "benchmark": spec.id,
        "roles_before": dict(sorted(experiment.roles.items())),
        "roles_after": dict(sorted(scored.roles.items())),
        "episodes": len(plans),
        "rescored": len(rescored),
        "failed_in_rescore": sorted(failed),
        "kept_failed": len(finished) - len(rescored),
        "not_finished": len(plans) - len(finished),
        "not_rescored": dict(left_out),
        "confide": __version__,
        "started_at": started,
        "usage": {k: v.model_dump() for k, v in models.meter.snapshot().items()},
    }
    atomic.write_text(target / RECORD, _json(record))
    return RescoreSummary(
        source=source,
        run_dir=target,
        benchmark=spec.id,
        rescored=len(rescored),
        kept_failed=len(finished) - len(rescored),
        failed=failed,
        not_rescored=left_out,
        rows=rows,
        table=table,
        comparison=comparison,
    )


async def _rescore_episode(
    spec: BenchmarkSpec,
    plan: EpisodePlan,
    trace: Trace,
    scored: Experiment,
    fingerprint: dict[str, str],
    trace_dir: Path,
    models: RunModels,
    judges: list[str],
) -> EpisodeEnd:
    """Copy the played part of `trace` into a new trace and score it there; returns the
    footer (status error when scoring raised, as in a run)."""
    assert spec.score_episode is not None  # checked by `_check_roles`
    played = played_part(trace.events) or []
    config = dict(trace.header.config)
    config["roles"] = dict(scored.roles)
    modes = await _modes(plan, scored, config.get("structured_output") or {}, judges, models)
    config.pop("structured_output", None)
    if modes:
        config["structured_output"] = modes
    header = trace.header.model_copy(update={"config": config, "fingerprint": fingerprint})
    writer = await asyncio.to_thread(TraceWriter, trace_dir, plan.episode_id)
    try:
        for event in (header, *played):
            writer.emit(event, stamp=False)
        ctx = episode_context(spec, plan, scored, writer, models)
        footer = with_spend(spec, await ended(score_played(ctx, spec.score_episode)),
                            writer.events)
    except BaseException:
        await asyncio.to_thread(writer.discard)
        raise
    await asyncio.to_thread(writer.finish, footer)
    return slim(footer)


async def _modes(
    plan: EpisodePlan,
    scored: Experiment,
    old: Mapping[str, str],
    judges: list[str],
    models: RunModels,
) -> dict[str, str]:
    """The header's structured-output modes as a run with the new bindings records them:
    the old entries of the models still in use, and the new judges' modes."""
    in_use = {str(seat.model) for seat in plan.lineup if seat.model is not None}
    in_use |= {spec.split(":", 1)[0] for spec in scored.roles.values()}
    modes = {spec: mode for spec, mode in old.items() if spec in in_use}
    return {**modes, **await models.structured_output(SeatSpec(spec) for spec in judges)}


def redacted_options(
    options: Mapping[str, Any], prefix: str = "model_options"
) -> tuple[dict[str, Any], set[str]]:
    """The model options without the values `experiment.yaml` stored redacted (a key, a
    URL with a password), and the fingerprint keys of those. The providers then take
    credentials from the environment, as the run did (`OPENAI_API_KEY`,
    `CONFIDE_OPENAI_API_KEY`, `CONFIDE_OPENAI_API_BASE_URL`)."""
    kept: dict[str, Any] = {}
    hidden: set[str] = set()
    for key, value in options.items():
        if isinstance(value, Mapping):
            kept[key], inner = redacted_options(value, f"{prefix}.{key}")
            hidden |= inner
        elif isinstance(value, str) and MASK in value:
            hidden.add(f"{prefix}.{key}")
        else:
            kept[key] = value
    return kept, hidden


def _keep(fingerprint: dict[str, str], trace: Trace, hidden: set[str]) -> dict[str, str]:
    """The new fingerprint, with the stored value of each key whose option was redacted
    (the run hashed the real value, which the rescore never sees)."""
    stored = trace.header.fingerprint
    return {**{k: v for k, v in fingerprint.items() if k not in hidden},
            **{k: stored[k] for k in hidden if k in stored}}


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
