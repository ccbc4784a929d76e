"""Concurrent execution of an experiment with resume.

Each episode writes its own trace; results are rebuilt from complete traces, so a run
killed at any point and started again runs every episode exactly once: complete traces
(status ok) are skipped, partial or failed ones are run again, their answered model calls
replayed from the episode's journal (`journal`) rather than paid for again. A finished
episode is reused only when its fingerprint matches this run's (`fingerprint`); the run
holds a lock on its directory (`rundir`); SIGINT and SIGTERM stop it cleanly
(`interrupt`): no new episodes, in-flight ones cancelled and discarded, every output
written for the finished ones, `RunSummary.interrupted` set. A CPU-bound run plays in a
pool of processes, one per usable core (`pool`); a run that calls models in this one.

Memory stays flat as the run grows: a finished episode leaves only its status in memory;
its result rows go to a spool file (`results.ResultSpool`), its events live in the trace
file, and the benchmark's output hook reads the traces back one at a time (`TraceFiles`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confide import atomic
from confide.core.benchmark import BenchmarkSpec
from confide.core.trace import (
    EpisodeStart,
    find_trace,
)
from confide.errors import ConfideError
from confide.redaction import scrub_data
from confide.runner.config import Experiment, dump_experiment
from confide.runner.episode import load_complete, run_episode
from confide.runner.expand import EpisodePlan, expand, worker_chains
from confide.runner.fingerprint import check_resume, episode_fingerprints
from confide.runner.interrupt import StopSignals
from confide.runner.journal import JOURNAL_DIR, drop_finished
from confide.runner.metadata import run_metadata
from confide.runner.models import RunModels, run_prices
from confide.runner.outputs import warm_outputs, write_run_outputs
from confide.runner.pool import pool_episodes, pool_size
from confide.runner.preflight import preflight
from confide.runner.progress import RunProgress
from confide.runner.resolve import resolve_experiment
from confide.runner.results import ResultSpool, SpoolEntry, spend_roles, spool_entry
from confide.runner.rundir import (
    check_not_foreign,
    check_same_experiment,
    default_run_dir,
    point_latest,
    prepare,
    run_dir_of,
    run_lock,
    set_aside,
)

if TYPE_CHECKING:
    from confide.runner.ray_backend import RayEpisodes


@dataclass
class RunSummary:
    """What a run produced."""

    run_dir: Path
    episodes: int
    skipped: int
    finished: int = 0
    """Episodes with a complete trace at the end (all of them unless interrupted)."""
    interrupted: bool = False
    failed: list[str] = field(default_factory=list)
    rows: Sequence[dict[str, Any]] = field(default_factory=list)
    """results.csv's rows (read from the file when used: cells are text)."""
    table: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall seconds of the run's phases: `episodes` (playing them), `outputs` (every
    derived table, audit and report)."""
    replaced: Path | None = None
    """Where `fresh` moved the directory's previous run (None: there was none)."""


def run_experiment(
    experiment: Experiment,
    *,
    show_progress: bool = True,
    fresh: bool = False,
    freeze_gc: bool = False,
) -> RunSummary:
    """Run (or resume) an experiment synchronously, stopping cleanly on SIGINT / SIGTERM
    when called from the main thread; see `run_experiment_async`. Inside a running event
    loop (a Jupyter cell) the run gets its own loop in a worker thread and this call blocks
    until it ends; `await run_experiment_async(...)` instead keeps the notebook's loop."""
    importing = sys.modules.get("__mp_main__")  # what a spawned process runs the script as
    if importing is not None and importing is not sys.modules.get("__main__"):
        raise ConfideError(  # a process of the local pool is importing the caller's script
            "run_experiment was called while a worker process imported your script: call "
            'it under `if __name__ == "__main__":`, as any program that spawns processes'
        )

    async def main(signals: StopSignals) -> RunSummary:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def request_stop() -> None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(stop.set)

        signals.on_stop(request_stop)
        return await run_experiment_async(
            experiment, show_progress=show_progress, fresh=fresh, stop=stop,
            freeze_gc=freeze_gc,
        )

    with StopSignals() as signals:
        if _loop_running():
            with ThreadPoolExecutor(1, thread_name_prefix="confide-run") as pool:
                return pool.submit(asyncio.run, main(signals)).result()
        return asyncio.run(main(signals))


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def run_experiment_async(
    experiment: Experiment,
    *,
    show_progress: bool = True,
    fresh: bool = False,
    stop: asyncio.Event | None = None,
    freeze_gc: bool = False,
) -> RunSummary:
    """Preflight (every problem at once, before anything is written), resolve every
    default, lock the run directory, check that the complete episodes may be reused and
    that the directory holds no other experiment (`rundir`; `fresh` moves the previous
    run aside instead), run the rest with bounded concurrency, then write
    results.csv, the summary table and the benchmark's own outputs. Setting `stop` starts
    no more episodes and cancels the running ones; the outputs then cover the finished
    episodes. `freeze_gc` (the CLI's choice, never a library default: it changes the
    caller's whole process) moves the loaded tasks out of the cyclic collector's sight."""
    on_ray = experiment.backend == "ray"
    if on_ray:
        from confide.runner.ray_backend import (
            ray_connected,
            ray_episodes,
            reach_ray,
            require_ray,
        )

        require_ray()
    with contextlib.ExitStack() as early:
        cluster = None
        # Ray workers start as early as they may, and import confide while this process
        # goes on: before preflight on a cluster this process is connected to already,
        # right after it otherwise (a refused experiment never starts or joins a cluster)
        if on_ray and ray_connected():
            cluster = early.enter_context(ray_episodes(experiment.benchmark, None))
        spec = preflight(experiment).spec
        if on_ray:  # an address given is checked even where a connection stands
            reach_ray(experiment.ray_address)
        experiment = resolve_experiment(spec, experiment)
        if on_ray and cluster is None:
            cluster = early.enter_context(ray_episodes(spec.id, experiment.ray_address))
        plans = expand(spec, experiment)
        prints = episode_fingerprints(spec.id, experiment, plans)
        # Tasks and suites are loaded and live for the whole run: move them out of the
        # cyclic collector's sight so each collection scans only what episodes allocate
        # (measured: ~13% less CPU per reference-protocol game).
        if freeze_gc:
            gc.freeze()
        run_dir = run_dir_of(experiment)
        replaced = set_aside(run_dir) if fresh else None
        check_not_foreign(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        with run_lock(run_dir):
            prepare(run_dir)
            summary = await _run_locked(
                spec, experiment, plans, prints, run_dir, show_progress,
                stop if stop is not None else asyncio.Event(), cluster,
            )
    summary.replaced = replaced
    return summary


async def _run_locked(
    spec: BenchmarkSpec,
    experiment: Experiment,
    plans: list[EpisodePlan],
    prints: Mapping[str, dict[str, str]],
    run_dir: Path,
    show_progress: bool,
    stop: asyncio.Event,
    cluster: RayEpisodes | None,
) -> RunSummary:
    trace_dir = run_dir / "traces"
    trace_dir.mkdir(parents=True, exist_ok=True)
    with ResultSpool(run_dir, spend_roles(spec, experiment)) as results:
        headers: dict[str, EpisodeStart] = {}
        for plan in plans:
            found = load_complete(find_trace(trace_dir, plan.episode_id), spec)
            if found is not None:
                headers[plan.episode_id] = found[0]
                results.add(plan, found[1])
        check_resume(str(run_dir), prints, headers, score_roles=spec.score_roles)
        del headers
        check_same_experiment(run_dir, experiment)
        return await _run_checked(
            spec, experiment, plans, prints, run_dir, show_progress, stop, results, cluster
        )


async def _run_checked(
    spec: BenchmarkSpec,
    experiment: Experiment,
    plans: list[EpisodePlan],
    prints: Mapping[str, dict[str, str]],
    run_dir: Path,
    show_progress: bool,
    stop: asyncio.Event,
    results: ResultSpool,
    cluster: RayEpisodes | None,
) -> RunSummary:
    """The run once its finished episodes (spooled in `results`) may be reused; `cluster`:
    the Ray workers of a `backend: ray` run, started already."""
    trace_dir = run_dir / "traces"
    dump_experiment(experiment, run_dir / "experiment.yaml")
    if run_dir == default_run_dir(experiment):
        point_latest(run_dir)
    meta = run_metadata()
    prices = run_prices(experiment)
    provenance = prices.provenance(experiment.price_table)
    write_run_json(run_dir, experiment, {**meta, "prices": provenance})
    todo = [p for p in plans if p.episode_id not in results]
    journal_dir = run_dir / JOURNAL_DIR
    drop_finished(journal_dir, results)
    models = RunModels(
        cache_dir=experiment.cache_dir, options=experiment.model_options, prices=prices
    )
    failed: list[str] = []

    async def play_here(plan: EpisodePlan) -> SpoolEntry | None:
        footer = await run_episode(
            spec, plan, experiment, trace_dir, models, prints[plan.episode_id], stop, meta=meta,
            journal_dir=journal_dir,
        )
        return None if footer is None else spool_entry(plan, footer, results.roles)

    play: Callable[[EpisodePlan], Awaitable[SpoolEntry | None]] = play_here
    at_once = experiment.episodes_at_once
    backend = contextlib.ExitStack()
    if cluster is not None:  # episodes run on Ray workers; all the rest stays here
        backend.callback(cluster.close)
        cluster.begin(spec, experiment, results.roles, trace_dir, todo, prints, stop,
                      models.meter)
        play, at_once = cluster.play, cluster.in_flight
    elif (workers := pool_size(experiment, len(todo))) > 1:  # CPU-bound: every core
        pool = backend.enter_context(pool_episodes(
            spec, experiment, trace_dir, todo, prints, results.roles, stop, workers
        ))
        play, at_once = pool.play, pool.in_flight
    started = time.perf_counter()
    # this process only waits for the episodes played elsewhere: it gets the outputs ready
    # in a thread once they play (after a pool's processes are forked, which wants a
    # process without threads, and after Ray's workers have the run: the imports, holding
    # this process's interpreter lock, would delay handing it to them)
    warming = _warm(spec) if play is not play_here else None
    # `at_once` workers take the chains in order: a task per chain, all waiting at once,
    # would hold a coroutine for every episode of the run from its start
    chains = iter(worker_chains(experiment, plans, todo))
    with backend, RunProgress(len(plans), len(plans) - len(todo), models.meter,
                              show_progress, spec.id) as bar:

        async def worker() -> None:
            for chain in chains:
                for plan in chain:
                    if stop.is_set():
                        return
                    entry = await play(plan)
                    if entry is None:
                        return
                    results.put(plan.episode_id, entry)
                    ok = entry.status == "ok"
                    if not ok:
                        failed.append(plan.episode_id)
                    bar.advance(ok)

        await asyncio.gather(*(worker() for _ in range(min(at_once, len(todo)))))
    if warming is not None:
        await warming
    with contextlib.suppress(OSError):  # the journals' folder, once every journal is gone
        journal_dir.rmdir()

    played = time.perf_counter()
    finished = [p for p in plans if p.episode_id in results]
    rows, table = write_run_outputs(
        spec, run_dir, finished, results, usage=models.meter.snapshot()
    )
    seconds = {"episodes": played - started, "outputs": time.perf_counter() - played}
    return RunSummary(
        run_dir=run_dir,
        episodes=len(plans),
        skipped=len(plans) - len(todo),
        finished=len(finished),
        interrupted=stop.is_set(),
        failed=sorted(failed),
        rows=rows,
        table=table,
        usage={
            "total": models.meter.total().model_dump(),
            **{k: v.model_dump() for k, v in models.meter.snapshot().items()},
        },
        seconds=seconds,
    )


def _warm(spec: BenchmarkSpec) -> asyncio.Future[None] | None:
    """`warm_outputs` in a thread, started now (the loop may be blocked next)."""
    if not spec.output_imports:
        return None
    return asyncio.get_running_loop().run_in_executor(None, warm_outputs, spec)


def write_run_json(run_dir: Path, experiment: Experiment, meta: Mapping[str, Any]) -> None:
    """`run.json`: the run metadata and the resolved experiment (without secrets)."""
    data = {**meta, "experiment": scrub_data(experiment.model_dump(mode="json"))}
    atomic.write_text(run_dir / "run.json", json.dumps(data, indent=2, sort_keys=False) + "\n")
