"""`backend: ray`: episodes on the workers of a Ray cluster, everything else on the driver.

The driver (the `confide run` process) does what it does for the local backend: expands
the experiment, holds the run directory's lock, skips finished episodes, shows progress
and writes results.csv, the summary and every derived output. Only `run_episode` moves:
it runs inside `EpisodeWorker` actors, one per CPU of the cluster (`num_cpus=1` each, so
Ray spreads them over the nodes), each an asyncio actor playing several episodes at once
exactly as the local runner does, with its benchmark, suites and models kept warm.

Where files live: both ways are supported, chosen per worker by a probe at its start
(`ray_traces: auto`, the default; `returned` skips the probe and every worker returns).
The driver writes a token file holding a random nonce into `<run dir>/traces/`; a worker
that reads the same nonce at the same path, and can create a file there, shares the run
directory (same machine, or a shared filesystem) and writes each trace into it itself,
exactly as the local backend does (a `.partial` file renamed into place once the episode
finished), returning only the slim footer. Any other worker writes the trace into its own
temporary directory and returns the finished file's bytes, which the driver writes into
`<run dir>/traces/` atomically; so the run directory needs to exist only on the driver's
machine. Either way a trace appears under its final name only when its episode finished,
and the `.partial` a worker killed mid-episode leaves is removed by the driver before the
episode is played again. Each trace header records the way (`config.placement.trace`:
`shared` or `returned`). Writing in place matters on a small machine: the bytes' way
costs the driver a read, a copy and an fsync per episode, on the cores the workers play on.
Relative paths a worker reads (a `replay/` trace, `cache_dir`, a price table) are resolved
against the driver's working directory; on several machines they must exist at the same
path on every node.

Calls: a Ray call costs about 1.6 ms of CPU between the driver and the worker (measured on
2 cores; a reference-protocol game costs about 20 ms), so a run whose seats and roles call
no model (short, CPU-bound episodes) hands each worker its episodes `PER_CALL` at a time in
one call, and keeps two such calls per worker in flight. The worker plays them in the order
the calls came, two episodes at a time (the next one plays while one's trace is flushed):
overlapping a call's episodes all at once gains nothing for CPU-bound games, and makes the
two calls end together, the worker idle while the driver answers both. Measured on the
README main job, 2 workers on 2 cores: games 1.52x and 1.64x faster than local with a
call's episodes all at once, 1.73x and 1.85x in order. A run that calls models sends
one episode per call: its episodes last seconds and vary, and a batch would hold its
finished episodes until its slowest one ends.

Start: a worker is started knowing only the benchmark's name, and imports confide and
loads the benchmark (about two thirds of a second of a core, on a fresh worker) while the
driver works: in a process already connected to Ray (a notebook, a program that called
`ray.init`) the workers start before preflight, while the driver loads and checks the
tasks, and are ended if preflight refuses the experiment; otherwise right after
preflight (a refused experiment never starts or joins a cluster), while the driver
expands the run, computes its fingerprints, locks its directory and reads back finished
episodes. The run itself (the resolved experiment, its work, the probe of its trace
directory) follows in one `load` call per worker (`RayEpisodes.begin`), and the games
start once every worker has loaded it. A worker imports only what playing needs
(`confide.runner` loads its driver-side entry points on first use); the driver pickles
the work once with the standard library, and imports what its outputs need only after
the workers have the run (`execute`), so nothing holds back that hand-over.

Faults: an episode whose worker dies (SIGKILL, OOM kill, a lost node) is played again on
a fresh worker, up to `ATTEMPTS` times in all; its result is taken once, from the attempt
that finished. When every attempt died, the driver writes the episode's trace itself (its
header and a failed footer naming the cause), so it is a failed episode like any other.
A killed driver takes its Ray job down with it (Ray kills a job's actors when its driver
exits); re-running the command resumes from the traces on disk.

Shared limits: the per-provider concurrency limits (the registry rows' `max_connections`)
hold for the whole cluster. A `ProviderSlots` actor owns one semaphore per provider and
every worker's models take their call slots from it (`ClusterLimiter`); a dead worker's
slots are given back when the driver replaces it. A run whose seats and roles call no
model has no slots to share and starts no such actor (on a small cluster it would be one
more process importing confide while the workers start). The on-disk response cache needs no
coordination: each entry is written to a unique temporary file and renamed into place,
so concurrent writers of one key leave one whole entry (`confide.llm.cache`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import itertools
import logging
import os
import pickle
import secrets
import shutil
import socket
import sys
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confide import atomic
from confide.atomic import TEMP_SUFFIX
from confide.core.benchmark import BenchmarkSpec
from confide.core.trace import EpisodeEnd, TraceWriter, find_trace, partial_file, trace_file
from confide.errors import ConfideError
from confide.llm import ModelUsage, ProviderLimiter, UsageMeter
from confide.llm.registry import default_limits
from confide.registry import get_benchmark
from confide.runner.config import Experiment, ray_endpoint
from confide.runner.episode import episode_start, load_complete
from confide.runner.expand import EpisodePlan
from confide.runner.journal import JOURNAL_DIR
from confide.runner.models import RunModels, run_prices
from confide.runner.player import EpisodePlayer, Work, calls_models
from confide.runner.results import SpoolEntry, spool_entry

INSTALL_HINT = "backend: ray needs Ray; install it with: pip install 'confide[ray]'"
ATTEMPTS = 3
"""Plays of one episode whose worker died before it is recorded as failed."""
PROVIDER_LIMITS: Mapping[str, int | None] = default_limits()
"""Call slots per provider for the whole cluster (the local backend's per-process ones)."""
CANCEL_WAIT_S = 10.0
"""How long a stopped run waits for a worker to discard a cancelled episode."""
PER_CALL = 8
"""Episodes per Ray call for a run that calls no model (module docstring, "Calls")."""

Outcome = tuple[bytes | None, SpoolEntry, dict[str, ModelUsage], int]
"""What a worker returns for a finished episode: the trace file's bytes (None when it
wrote the trace into the run directory itself), its `results.SpoolEntry` (its rows
scrubbed and pickled on the worker, so the driver only appends bytes), the worker's
cumulative model usage and that usage's sequence number."""
def episodes_per_call(experiment: Experiment) -> int:
    """`PER_CALL` when no seat or role of `experiment` names a model, else 1."""
    return 1 if calls_models(experiment) else PER_CALL


@dataclass(frozen=True)
class Probe:
    """The token file by which a worker finds out whether it shares the run directory."""

    trace_dir: str
    name: str
    nonce: str

    @classmethod
    def create(cls, trace_dir: Path) -> Probe:
        """Write a fresh token into `trace_dir` (named as a temporary, so a run killed
        before removing it leaves nothing `sweep_temporaries` keeps)."""
        nonce = secrets.token_hex(16)
        probe = cls(str(trace_dir.resolve()), f".ray-probe.{nonce[:8]}{TEMP_SUFFIX}", nonce)
        atomic.write_text(probe.path, nonce)
        return probe

    @property
    def path(self) -> Path:
        return Path(self.trace_dir) / self.name

    def shared(self) -> bool:
        """True where the token is readable with its nonce and the directory writable."""
        try:
            if self.path.read_text() != self.nonce:
                return False
            with tempfile.NamedTemporaryFile(dir=self.trace_dir, prefix=".", suffix=TEMP_SUFFIX):
                return True
        except OSError:
            return False


def require_ray() -> None:
    """Fail with the install hint unless Ray can be imported (a preflight check)."""
    if importlib.util.find_spec("ray") is None:
        raise ConfideError(INSTALL_HINT)


RAY_CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a Ray cluster's address to accept a connection before the run is
refused (ray.init itself retries an unreachable address for minutes)."""


def reach_ray(address: str | None, timeout: float = RAY_CONNECT_TIMEOUT) -> None:
    """Refuse a `host:port` address that accepts no connection within `timeout` seconds,
    before anything is written ('auto' and a local cluster are left to Ray)."""
    import socket

    endpoint = ray_endpoint(address) if address is not None else None
    if endpoint is None:
        return
    try:
        socket.create_connection(endpoint, timeout=timeout).close()
    except OSError as exc:
        why = f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError) else (
            exc.strerror or str(exc))
        raise ConfideError(
            f"cannot reach the Ray cluster at {address!r}: {why}; check --ray-address "
            "(nothing was run)"
        ) from None


class ProviderSlots:
    """Cluster-wide call slots per provider (run as a Ray actor). A slot is asked for
    with a ticket; giving back a ticket that was never granted withdraws it, so a call
    cancelled while it waits never takes a slot later."""

    def __init__(self, limits: Mapping[str, int | None]) -> None:
        self._free = {p: n for p, n in limits.items() if n is not None}
        self._waiting: dict[str, deque[tuple[str, asyncio.Future[None]]]] = {
            p: deque() for p in self._free
        }
        self._held: dict[str, tuple[str, str]] = {}
        """ticket -> (holder, provider)"""
        self._withdrawn: set[str] = set()
        self._gone: set[str] = set()

    async def acquire(self, provider: str, holder: str, ticket: str) -> bool:
        """Wait for a slot of `provider`; False when the ticket was withdrawn first."""
        if provider not in self._free:
            return True
        if self._free[provider] > 0 and not self._waiting[provider]:
            self._free[provider] -= 1
        else:
            grant: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting[provider].append((ticket, grant))
            await grant
        if ticket in self._withdrawn or holder in self._gone:
            self._withdrawn.discard(ticket)
            self._hand_on(provider)
            return False
        self._held[ticket] = (holder, provider)
        return True

    def release(self, ticket: str) -> None:
        """Give back the slot of `ticket`, or withdraw it if it is not granted yet."""
        entry = self._held.pop(ticket, None)
        if entry is None:
            self._withdrawn.add(ticket)
            return
        self._hand_on(entry[1])

    def release_holder(self, holder: str) -> None:
        """Give back every slot of a dead worker and refuse its waiting requests."""
        self._gone.add(holder)
        for ticket, (owner, _) in list(self._held.items()):
            if owner == holder:
                self.release(ticket)

    def held(self) -> dict[str, int]:
        """Slots in use per provider."""
        counts = dict.fromkeys(self._free, 0)
        for _, provider in self._held.values():
            counts[provider] += 1
        return counts

    def _hand_on(self, provider: str) -> None:
        waiting = self._waiting[provider]
        while waiting:
            _, grant = waiting.popleft()
            if not grant.done():  # skip a request whose call was cancelled
                grant.set_result(None)
                return
        self._free[provider] += 1


class ClusterLimiter(ProviderLimiter):
    """A `ProviderLimiter` whose slots come from the cluster's `ProviderSlots` actor."""

    def __init__(self, slots: Any, holder: str, limits: Mapping[str, int | None]) -> None:
        super().__init__(limits)
        self._slots = slots
        self._holder = holder
        self._tickets = itertools.count()

    @asynccontextmanager
    async def slot(self, provider: str) -> AsyncIterator[None]:
        if self.limits.get(provider) is None:
            yield
            return
        ticket = f"{self._holder}:{next(self._tickets)}"
        try:
            await self._slots.acquire.remote(provider, self._holder, ticket)
            yield
        finally:
            self._slots.release.remote(ticket)  # also withdraws a request cancelled mid-wait


@dataclass(frozen=True)
class Job:
    """What a worker needs from the run, handed over once by `EpisodeWorker.load`: the
    benchmark's id, the resolved experiment, the cluster's call slots (None: the run
    calls no model) and their limits, whether a call's episodes play in order
    (`episodes_per_call` above 1), the roles whose spend columns each result row gets
    (`results.spend_roles`) and the probe of the run directory (None: return every trace)."""

    benchmark: str
    experiment: Experiment
    slots: Any
    limits: Mapping[str, int | None]
    one_at_a_time: bool
    roles: tuple[str, ...] | None
    probe: Probe | None


class EpisodeWorker:
    """Plays episodes on one Ray worker process (run as a Ray actor), through the
    `EpisodePlayer` every backend's worker processes share. It starts knowing only the
    benchmark's name, so it imports confide and the benchmark while the driver checks and
    expands the run (module docstring, "Start"), and is handed the run by `load`."""

    def __init__(self, benchmark: str, holder: str, cwd: str) -> None:
        if os.path.isdir(cwd):
            os.chdir(cwd)  # relative paths mean what they mean on the driver
        # its modules, imported while the driver works (a name preflight refuses stops the
        # run before `load`, so it is not this worker's error to report)
        with contextlib.suppress(ConfideError):
            get_benchmark(benchmark)
        self.holder = holder
        self.shared = False
        """Whether this worker writes its traces into the run directory itself."""
        self.trace_dir: Path | None = None
        self._player: EpisodePlayer | None = None
        self._loaded = asyncio.Event()
        self._reports = itertools.count(1)
        self.roles: tuple[str, ...] | None = None
        """The roles whose spend columns each result row gets (`results.spend_roles`)."""

    async def load(self, job: Job, work: bytes) -> str:
        """Take the run (`job`) and its work (pickled: `RayEpisodes.begin`), and find out
        where its traces go; where this worker runs."""
        import ray

        experiment, probe = job.experiment, job.probe
        options = dict(experiment.model_options)
        if job.slots is not None:
            options["limiter"] = ClusterLimiter(job.slots, self.holder, job.limits)
        models = RunModels(
            cache_dir=experiment.cache_dir, options=options, prices=run_prices(experiment)
        )
        self.roles = job.roles
        self.shared = probe is not None and probe.shared()
        self.trace_dir = (
            Path(probe.trace_dir) if probe is not None and self.shared
            else Path(tempfile.mkdtemp(prefix="confide-ray-"))
        )
        placement = {
            "backend": "ray",
            "host": socket.gethostname(),
            "pid": str(os.getpid()),
            "node_id": ray.get_runtime_context().get_node_id(),
            "worker": self.holder,
            "trace": "shared" if self.shared else "returned",
        }
        # this worker journals its paid calls in the run's own `journal/` when it writes
        # into the run directory (one with a private directory has nowhere a resume would
        # find them)
        journal_dir = self.trace_dir.parent / JOURNAL_DIR if self.shared else None
        self._player = EpisodePlayer(
            job.benchmark, experiment, pickle.loads(work), self.trace_dir, models, placement,
            journal_dir, job.one_at_a_time,
        )
        self._loaded.set()
        return placement["node_id"]

    @property
    def player(self) -> EpisodePlayer:
        assert self._player is not None, "load comes first"
        return self._player

    async def play(self, episode_ids: Sequence[str]) -> list[Outcome | None]:
        """Run episodes of the work, one outcome per id, in order (`EpisodePlayer.each`)."""
        await self._loaded.wait()  # an async actor's calls may start out of order
        return await self.player.each(episode_ids, self._play)

    async def _play(self, episode_id: str) -> Outcome | None:
        """Run one episode of the work; its trace bytes (None when written in place), slim
        footer and this worker's usage so far (None if it was cancelled)."""
        stop = asyncio.Event()
        episode = asyncio.ensure_future(self.player.episode(episode_id, stop))
        try:
            footer = await asyncio.shield(episode)
        except asyncio.CancelledError:  # the driver stopped: discard the partial trace
            stop.set()
            await episode
            raise
        if footer is None:
            return None
        data = None
        if not self.shared:
            path = trace_file(self.player.trace_dir, episode_id)
            data = await asyncio.to_thread(path.read_bytes)
            path.unlink()
        entry = spool_entry(self.player.work[episode_id][0], footer, self.roles)
        return data, entry, self.player.models.meter.snapshot(), next(self._reports)

    def close(self) -> None:
        """Remove the temporary trace directory (never the run directory's)."""
        if not self.shared and self.trace_dir is not None:
            shutil.rmtree(self.trace_dir, ignore_errors=True)


@dataclass(eq=False)
class _Worker:
    actor: Any
    holder: str
    loaded: Any = None
    """The reference of its `load` call, once made."""


@dataclass
class _Call:
    """One episode waiting for its worker's reply (the worker set once it is sent)."""

    episode_id: str
    reply: asyncio.Future[Outcome | None]
    worker: _Worker | None = None


class RayEpisodes:
    """The driver's side: starts the workers (`__init__`, before the run is expanded),
    hands them the run's work (`begin`), then hands episodes to the least busy worker,
    writes the traces they return, replays an episode whose worker died, and adds the
    workers' model usage to the run's meter (for the progress bar and
    `RunSummary.usage`)."""

    def __init__(self, benchmark: str, limits: Mapping[str, int | None]) -> None:
        import ray

        self._ray: Any = ray  # handles and refs are untyped: one Any instead of many casts
        self._benchmark = benchmark
        self._cwd = os.getcwd()
        self._limits = dict(limits)
        self._probe: Probe | None = None
        self._job: Job | None = None
        self._work: Any = None
        """The run's work in Ray's object store, once `begin` put it there."""
        self._slots: Any = None
        count = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        self._names = itertools.count()
        self._workers = [self._start() for _ in range(count)]
        self._load = [0] * count
        self._per_call = 1
        self.in_flight = count
        """Episodes handed out at once (set by `begin`): per worker, `concurrency` as a
        local process runs them, or two calls' worth when episodes go several to a call."""
        self._reported: dict[str, tuple[int, dict[str, ModelUsage]]] = {}
        self._queue: list[_Call] = []
        self._calls: set[asyncio.Future[None]] = set()
        self._closed = False

    def begin(
        self,
        spec: BenchmarkSpec,
        experiment: Experiment,
        roles: tuple[str, ...] | None,
        trace_dir: Path,
        plans: Sequence[EpisodePlan],
        prints: Mapping[str, dict[str, str]],
        stop: asyncio.Event,
        meter: UsageMeter,
    ) -> None:
        """Hand every worker the run (`experiment` of `spec`, resolved; `roles`: those
        whose spend columns each result row gets) and the work of `plans` (played into
        `trace_dir`), and wait until all can play; `stop`: the run's stop, `meter`: where
        the workers' usage goes."""
        cache, table = experiment.cache_dir, experiment.price_table
        experiment = experiment.model_copy(
            update={
                "cache_dir": str(Path(cache).resolve()) if cache is not None else None,
                "price_table": str(Path(table).resolve()) if table is not None else None,
            }
        )
        self._spec, self._experiment, self._roles = spec, experiment, roles
        self._trace_dir = trace_dir
        self._prints = prints
        self._stop = stop
        self._meter = meter
        if experiment.ray_traces == "auto":
            self._probe = Probe.create(trace_dir)
        if calls_models(experiment):  # shared call slots, for a run that calls models
            self._slots = self._ray.remote(num_cpus=0)(ProviderSlots).remote(self._limits)
        self._per_call = episodes_per_call(experiment)
        at_once = experiment.episodes_at_once if self._per_call == 1 else 2 * self._per_call
        self.in_flight = len(self._workers) * at_once
        self._job = Job(spec.id, experiment, self._slots, self._limits, self._per_call > 1,
                        roles, self._probe)
        work: dict[str, Work] = {p.episode_id: (p, dict(prints[p.episode_id])) for p in plans}
        # pickled here by the standard library (as for the local pool's spawned processes):
        # Ray's own pickler took 0.18 s of this process's CPU for a CalBench main job's
        # work, the standard one 0.08 s, on the path to the games' start
        self._work = self._ray.put(pickle.dumps(work, pickle.HIGHEST_PROTOCOL))
        for worker in self._workers:
            self._hand_work(worker)
        self._check_start()

    def _start(self) -> _Worker:
        holder = f"w{next(self._names)}"
        actor = self._ray.remote(num_cpus=1, max_restarts=0)(EpisodeWorker).remote(
            self._benchmark, holder, self._cwd
        )
        worker = _Worker(actor, holder)
        if self._work is not None:  # a replacement, mid-run
            self._hand_work(worker)
        return worker

    def _hand_work(self, worker: _Worker) -> None:
        worker.loaded = worker.actor.load.remote(self._job, self._work)

    def _check_start(self) -> None:
        """Wait for every worker to be up, so a worker that cannot start at all (Ray
        nodes without confide, a broken environment) fails the run here, once, instead
        of failing every episode three times, and no episode queues behind a worker still
        importing confide while another one idles (the games start when all can play)."""
        ray = self._ray
        try:
            ray.get([w.loaded for w in self._workers])
        except ray.exceptions.RayError as exc:
            reason = str(exc).strip().splitlines()
            raise ConfideError(
                "a Ray worker could not start (every node needs the same Python environment "
                f"with confide installed): {reason[-1] if reason else exc!r}"
            ) from None

    async def play(self, plan: EpisodePlan) -> SpoolEntry | None:
        """Play `plan` on a worker and write its trace; its spool entry, None when the run
        stopped first."""
        ray = self._ray
        lost: BaseException | None = None
        for _ in range(ATTEMPTS):
            call = _Call(plan.episode_id, asyncio.get_running_loop().create_future())
            self._enqueue(call)
            try:
                outcome = await call.reply
            except ray.exceptions.RayActorError as exc:  # the worker died: play it again
                lost = exc
                assert call.worker is not None
                self._replace(call.worker)
                await asyncio.to_thread(self._remove_partial, plan)
                finished = await asyncio.to_thread(self._finished_meanwhile, plan)
                if finished is not None:  # ... unless its trace already stands
                    return finished
                continue
            if outcome is None:
                await asyncio.to_thread(self._remove_partial, plan)
                return await asyncio.to_thread(self._finished_meanwhile, plan)
            data, entry, usage, sequence = outcome
            if data is not None:
                path = trace_file(self._trace_dir, plan.episode_id)
                await asyncio.to_thread(atomic.write_bytes, path, data)
            assert call.worker is not None
            self._add_usage(call.worker.holder, sequence, usage)
            return entry
        reason = str(lost).strip().splitlines()[0] if lost is not None else "unknown"
        footer = EpisodeEnd(
            status="error", error=f"its Ray worker died on all {ATTEMPTS} attempts ({reason})"
        )
        await asyncio.to_thread(self._write_lost, plan, footer)
        return spool_entry(plan, footer, self._roles)

    def _finished_meanwhile(self, plan: EpisodePlan) -> SpoolEntry | None:
        """The spool entry of `plan` when a worker writing into the shared run directory
        finished it but never replied (the run stopped and the cancel came too late, or
        the worker died later in the same call), so the run counts the trace that stands,
        as a resume would, instead of playing it again; None otherwise."""
        if self._probe is None:
            return None
        found = load_complete(find_trace(self._trace_dir, plan.episode_id), self._spec)
        return None if found is None else spool_entry(plan, found[1], self._roles)

    def _remove_partial(self, plan: EpisodePlan) -> None:
        """Remove the `.partial` an episode left in the run directory (its worker died,
        or the run stopped before the worker unwound it)."""
        partial_file(self._trace_dir, plan.episode_id).unlink(missing_ok=True)

    def _write_lost(self, plan: EpisodePlan, footer: EpisodeEnd) -> None:
        """The trace of an episode no worker finished, written by the driver: its header
        and the failed footer, as the local backend leaves for a failed episode (so the
        viewer, `trace list --failed` and rescore see it like any other failure)."""
        writer = TraceWriter(self._trace_dir, plan.episode_id)
        writer.emit(episode_start(
            self._spec, plan, self._experiment, self._prints[plan.episode_id],
            {"backend": "ray", "host": socket.gethostname(), "worker": "driver"},
        ))
        writer.finish(footer)

    def _enqueue(self, call: _Call) -> None:
        """Queue `call`; the queue is sent once the episodes asked for in this turn of the
        event loop have joined it (a call's worth of episodes finishes at once, and their
        runner tasks ask for the next ones together)."""
        if not self._queue:
            asyncio.get_running_loop().call_soon(self._send)
        self._queue.append(call)

    def _send(self) -> None:
        """Hand the queued episodes to the least busy workers, `_per_call` per call."""
        while self._queue:
            batch, self._queue = self._queue[: self._per_call], self._queue[self._per_call :]
            index = min(range(len(self._workers)), key=self._load.__getitem__)
            worker = self._workers[index]
            for call in batch:
                call.worker = worker
            self._load[index] += len(batch)
            ref = worker.actor.play.remote([call.episode_id for call in batch])
            sent = asyncio.ensure_future(self._reply(index, ref, batch))
            self._calls.add(sent)  # held until done: the loop keeps only a weak reference
            sent.add_done_callback(self._calls.discard)

    async def _reply(self, index: int, ref: Any, batch: list[_Call]) -> None:
        """Pass each episode of a call its outcome (None for all if the run stopped, the
        error for all if the worker died)."""
        try:
            outcomes = await self._await(ref)
        except Exception as exc:
            for call in batch:
                if not call.reply.done():
                    call.reply.set_exception(exc)
            return
        except asyncio.CancelledError:
            for call in batch:
                call.reply.cancel()
            raise
        finally:
            self._load[index] -= len(batch)
        for call, outcome in zip(batch, outcomes or [None] * len(batch), strict=True):
            if not call.reply.done():
                call.reply.set_result(outcome)

    async def _await(self, ref: Any) -> list[Outcome | None] | None:
        """The outcomes of the call `ref`, or None (the call cancelled) when the run stops
        first."""
        result = asyncio.wrap_future(ref.future())
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait((result, stopped), return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not result.done():
            self._ray.cancel(ref)
            # the worker discards the episode's partial trace as it unwinds: let it
            await asyncio.wait((result,), timeout=CANCEL_WAIT_S)
            if not result.done():
                result.cancel()
                return None
            if result.cancelled() or result.exception() is not None:
                return None  # cancelled (the exception retrieved, so it is not logged)
            # it finished before the cancel reached it: its trace may already stand in a
            # shared run directory, so it is kept and counted like any finished episode
        outcomes: list[Outcome | None] = result.result()
        return outcomes

    def _replace(self, dead: _Worker) -> None:
        """A fresh worker in place of `dead` (once, however many of its episodes fail),
        its provider slots given back."""
        if dead not in self._workers:
            return
        self._ray.kill(dead.actor, no_restart=True)
        if self._slots is not None:
            self._slots.release_holder.remote(dead.holder)
        self._workers[self._workers.index(dead)] = self._start()

    def _add_usage(self, holder: str, sequence: int, usage: dict[str, ModelUsage]) -> None:
        """Add what a worker spent since its last report (reports may arrive out of
        order: an older one is ignored)."""
        last_sequence, last = self._reported.get(holder, (0, {}))
        if sequence <= last_sequence:
            return
        self._reported[holder] = (sequence, usage)
        for model, total in usage.items():
            before = last.get(model, ModelUsage())
            delta = {k: getattr(total, k) - getattr(before, k) for k in ModelUsage.model_fields}
            self._meter.add(model, ModelUsage(**delta))

    def close(self) -> None:
        """Remove the workers' temporary directories and end the workers (once)."""
        if self._closed:
            return
        self._closed = True
        ray = self._ray
        # a dead or unreachable worker keeps its temporary directory
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get([w.actor.close.remote() for w in self._workers], timeout=30)
        for worker in self._workers:
            ray.kill(worker.actor, no_restart=True)
        if self._slots is not None:
            ray.kill(self._slots, no_restart=True)
        if self._probe is not None:
            self._probe.path.unlink(missing_ok=True)


def ray_connected() -> bool:
    """Whether this process is connected to a Ray cluster already (a notebook or a
    program that called `ray.init`): a run's workers can then start before its
    preflight (module docstring, "Start")."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


@contextmanager
def ray_episodes(benchmark: str, address: str | None) -> Iterator[RayEpisodes]:
    """Start the workers that will play episodes of `benchmark` on Ray (`RayEpisodes`;
    `begin` hands them the run). Connects to Ray (`address`: 'auto' or host:port joins
    that cluster, None starts a local one; a process already connected keeps its
    connection), and ends the workers (and a Ray started here) afterwards."""
    require_ray()
    import ray

    started = not ray.is_initialized()
    if started:
        address = address or "local"
        try:
            ray.init(
                address=address,
                include_dashboard=False if address == "local" else None,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        except ConnectionError as exc:
            raise ConfideError(f"cannot join the Ray cluster at {address!r}: {exc}") from None
    try:
        episodes = RayEpisodes(benchmark, PROVIDER_LIMITS)
        try:
            yield episodes
        finally:
            episodes.close()
    finally:
        if started:
            ray.shutdown()
