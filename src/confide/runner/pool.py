"""`backend: local` on several cores: a CPU-bound run's episodes in a pool of processes.

Which mode runs: a lineup whose seats and roles call no model (every reference run) plays
short CPU-bound episodes, which one asyncio process plays on one core only, so when more
than one core is usable (`workers`, default the cores this process may run on) and the run
has at least `MIN_POOLED` episodes to play, they go to a pool of `workers` processes. A
run that calls models keeps the single asyncio process: its episodes wait on the network,
hundreds overlap in one process, and the per-provider call limits, the response cache and
the usage meter stay in one place.

Everything else is the local backend's: this process expands the experiment, holds the
run directory's lock, skips finished episodes, shows progress and writes every output.
Each pool process plays episodes through `player.EpisodePlayer` (the Ray workers' own
player, so `episode.run_episode` stays the one per-episode entry point), writing each
trace into the run directory itself (a `.partial` renamed into place once the episode
finished) and returning only the episode's `results.SpoolEntry`: its result rows,
scrubbed, and the table rows its scorer computed, pickled in the process that played it,
so this process only appends bytes to its spool while the episodes play on the cores.
Episodes go `PER_CALL` to a call, two calls per process in flight, in plan order; results
are kept in plan order whatever order the calls end in.

How the processes start: forked from this process where that is safe (POSIX, and this
process runs no other thread, so no lock can be copied held), after the run is loaded
and expanded: each starts with confide, the benchmark and the run's work already in
memory. Measured on the README main job, 2 workers: a spawned process spent about 0.8 s
of a core importing confide and the benchmark, plus unpickling the work, before its
first episode, and its start held this process (its work is written down a pipe the new
process reads only once its imports are done); the two processes' CPU went from 15.0 and
15.7 s spawned to 12.0 and 13.3 s forked (alternating runs on a loaded machine).
Elsewhere (another thread runs: a notebook, a Ray client; Windows) they are spawned, each
given the work pickled once.

Stops and deaths: a stop (SIGINT, SIGTERM, the caller's `stop`) sets a flag the processes
share: no process starts another episode, and one in play is cancelled at its next await
and its partial trace removed, as in one process (an episode that finished before the stop
reached it is kept and counted, its trace being in place). The processes ignore SIGINT (a
terminal's Ctrl-C reaches the whole process group; the stop is this process's to make),
and die with this process (Linux: `PR_SET_PDEATHSIG`; elsewhere a thread watching the
parent id), so a SIGKILLed run leaves no process writing into its directory and a rerun
resumes from the traces on disk, each finished episode played once. A pool process that
dies mid-run (killed, out of memory) ends the run with an error naming it; the finished
episodes' traces stay and a rerun resumes them.
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import pickle
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.synchronize import Event as ProcessEvent
from pathlib import Path

from confide.core.benchmark import BenchmarkSpec
from confide.errors import ConfideError
from confide.runner.config import Experiment
from confide.runner.expand import EpisodePlan
from confide.runner.journal import JOURNAL_DIR
from confide.runner.models import RunModels, run_prices
from confide.runner.player import EpisodePlayer, Work, calls_models
from confide.runner.results import SpoolEntry, spool_entry

PER_CALL = 8
"""Episodes per call to a pool process (a call costs the two processes pickling and a pipe
round trip; eight CPU-bound episodes make that a rounding error)."""
MIN_POOLED = 64
"""Fewest episodes to play for which a pool is started: starting a process costs more
than a few short episodes (a spawned one imports confide and unpickles the run's work:
about a second of one core)."""
WATCH_S = 0.05
"""How often an episode in play looks at the shared stop flag."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def pool_size(experiment: Experiment, episodes: int) -> int:
    """Processes the local backend plays `episodes` episodes of `experiment` in: 1 (this
    process, asyncio) for a run that calls a model or has fewer than `MIN_POOLED`
    episodes to play, else `workers` (default `usable_cores`). Module docstring."""
    if experiment.backend != "local" or calls_models(experiment) or episodes < MIN_POOLED:
        return 1
    return experiment.workers if experiment.workers is not None else usable_cores()


# ---- in a pool process ---------------------------------------------------------------

_player: EpisodePlayer | None = None
_loop: asyncio.AbstractEventLoop | None = None
_stop: ProcessEvent | None = None


_Run = tuple[str, Experiment, Mapping[str, Work], tuple[str, ...] | None]
"""What a pool process plays: the benchmark id, the experiment, the work, and the roles
whose spend columns each result row gets (`results.spend_roles`)."""
_roles: tuple[str, ...] | None = None


def _start(run: bytes | _Run, trace_dir: str, stop: ProcessEvent, parent: int) -> None:
    """Set up a pool process (its initializer): one event loop and one player for all
    its calls; `run`: as it is in a forked process, pickled once for every spawned one
    (a CalBench main job's work takes a third of a second to pickle)."""
    global _player, _loop, _stop, _roles
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked process has the run's, and
    signal.set_wakeup_fd(-1)  # its loop's wakeup pipe and running loop, none of them its
    asyncio.events._set_running_loop(None)
    _die_with(parent)
    loaded: _Run = pickle.loads(run) if isinstance(run, bytes) else run
    benchmark, experiment, work, _roles = loaded
    _stop = stop
    _loop = asyncio.new_event_loop()
    asyncio.set_event_loop(_loop)
    models = RunModels(
        cache_dir=experiment.cache_dir, options=experiment.model_options,
        prices=run_prices(experiment),
    )
    placement = {"backend": "local", "host": socket.gethostname(), "pid": str(os.getpid())}
    _player = EpisodePlayer(
        benchmark, experiment, work, Path(trace_dir), models, placement,
        Path(trace_dir).parent / JOURNAL_DIR, one_at_a_time=True,
    )


def _die_with(parent: int) -> None:
    """End this process as soon as `parent` (the run) dies, however it dies."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    else:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(WATCH_S)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="confide-parent-watch").start()
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)


def _play(episode_ids: Sequence[str]) -> list[SpoolEntry | None]:
    """Play `episode_ids` in order; each one's spool entry, None for one the stop came
    before or during."""
    assert _player is not None and _loop is not None
    return _loop.run_until_complete(_player.each(episode_ids, _one))


async def _one(episode_id: str) -> SpoolEntry | None:
    assert _player is not None and _stop is not None
    if _stop.is_set():
        return None
    stop = asyncio.Event()

    async def watch(flag: ProcessEvent) -> None:
        while not flag.is_set():
            await asyncio.sleep(WATCH_S)
        stop.set()

    watcher = asyncio.ensure_future(watch(_stop))
    try:
        footer = await _player.episode(episode_id, stop)
    finally:
        watcher.cancel()
    if footer is None:
        return None
    return spool_entry(_player.work[episode_id][0], footer, _roles)


# ---- in the run's process ------------------------------------------------------------


@dataclass
class _Call:
    """One episode waiting for its batch's reply."""

    episode_id: str
    reply: asyncio.Future[SpoolEntry | None]


def forks() -> bool:
    """Whether the pool's processes are forked from this one (module docstring): on
    Linux, when no other thread runs in this process."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _ready() -> None:
    """A call that only makes the pool start its processes."""


class PoolEpisodes:
    """The run's side: hands episodes to the pool `PER_CALL` at a time, in the order they
    are asked for, and passes each its spool entry (None when the run stopped first)."""

    def __init__(
        self,
        spec: BenchmarkSpec,
        experiment: Experiment,
        trace_dir: Path,
        plans: Sequence[EpisodePlan],
        prints: Mapping[str, dict[str, str]],
        roles: tuple[str, ...] | None,
        stop: asyncio.Event,
        workers: int,
    ) -> None:
        fork = forks()
        context = multiprocessing.get_context("fork" if fork else "spawn")
        self._flag = context.Event()
        work: dict[str, Work] = {p.episode_id: (p, prints[p.episode_id]) for p in plans}
        run: _Run = (spec.id, experiment, work, roles)
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start,
            initargs=(
                run if fork else pickle.dumps(run, pickle.HIGHEST_PROTOCOL),
                str(trace_dir), self._flag, os.getpid(),
            ),
        )
        if fork:  # every process forks at the first call: now, while no thread runs
            self._pool.submit(_ready)
        self._stop = stop
        self.in_flight = workers * 2 * PER_CALL
        """Episodes handed out at once: two calls' worth per process."""
        self._queue: list[_Call] = []
        self._calls: set[asyncio.Future[None]] = set()

    async def play(self, plan: EpisodePlan) -> SpoolEntry | None:
        """Play `plan` in a pool process; its spool entry, None when the run stopped
        first."""
        call = _Call(plan.episode_id, asyncio.get_running_loop().create_future())
        if not self._queue:  # sent once this turn of the loop's requests have joined
            asyncio.get_running_loop().call_soon(self._send)
        self._queue.append(call)
        return await call.reply

    def _send(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[:PER_CALL], self._queue[PER_CALL:]
            sent = asyncio.ensure_future(self._reply(batch))
            self._calls.add(sent)  # held until done: the loop keeps only a weak reference
            sent.add_done_callback(self._calls.discard)

    async def _reply(self, batch: list[_Call]) -> None:
        """Pass each episode of a batch its entry, or the pool's death to all."""
        try:
            entries = await self._entries([call.episode_id for call in batch])
        except BaseException as exc:
            for call in batch:
                if not call.reply.done():
                    call.reply.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        for call, entry in zip(batch, entries, strict=True):
            if not call.reply.done():
                call.reply.set_result(entry)

    async def _entries(self, episode_ids: list[str]) -> list[SpoolEntry | None]:
        if self._stop.is_set() or self._pool is None:
            return [None] * len(episode_ids)
        sent: Future[list[SpoolEntry | None]] = self._pool.submit(_play, episode_ids)
        result = asyncio.wrap_future(sent)
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait((result, stopped), return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not result.done():
            self._flag.set()  # the processes stop their episodes and start no more
            sent.cancel()  # a call no process took yet is dropped
            await asyncio.wait((result,))
        if result.cancelled():
            return [None] * len(episode_ids)
        if isinstance(error := result.exception(), BrokenProcessPool):
            raise ConfideError(
                "a worker process of the local backend died mid-run (killed, out of "
                "memory, or, from a script, one that calls run_experiment outside "
                '`if __name__ == "__main__":`); the finished episodes are kept: run the '
                "same command again to resume, or pass --workers 1 to play in one process"
            ) from error
        return result.result()

    def close(self) -> None:
        """Stop the processes (at once when the run stopped) and wait for them."""
        if self._stop.is_set():
            self._flag.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None  # with it the run's work it held for the processes' start


@contextmanager
def pool_episodes(
    spec: BenchmarkSpec,
    experiment: Experiment,
    trace_dir: Path,
    plans: Sequence[EpisodePlan],
    prints: Mapping[str, dict[str, str]],
    roles: tuple[str, ...] | None,
    stop: asyncio.Event,
    workers: int,
) -> Iterator[PoolEpisodes]:
    """Play `plans` (each at most once, through `play`) in a pool of `workers` processes,
    ended afterwards; `roles`: those whose spend columns each result row gets."""
    episodes = PoolEpisodes(spec, experiment, trace_dir, plans, prints, roles, stop, workers)
    try:
        yield episodes
    finally:
        episodes.close()
