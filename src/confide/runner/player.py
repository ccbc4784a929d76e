"""Playing a run's episodes in a process that only plays them: a Ray worker
(`ray_backend.EpisodeWorker`) or a process of the local pool (`pool`). Both name episodes
by id in the run's work (handed over once), play each through `episode.run_episode`, the
one per-episode entry point every backend shares, and write its trace where the player
was told to.

A CPU-bound run hands a player its episodes several to a call; they are played in the
order the calls came, two at a time (the next one plays while one's trace is flushed):
overlapping a call's episodes all at once gains nothing for CPU-bound games, and makes
the calls end together, the player idle while its caller answers them
(`ray_backend` docstring, "Calls", has the measurements)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from confide.core.benchmark import SeatSpec, parse_lineup
from confide.core.trace import EpisodeEnd
from confide.registry import get_benchmark
from confide.runner.config import Experiment
from confide.runner.episode import run_episode
from confide.runner.expand import EpisodePlan
from confide.runner.metadata import run_metadata
from confide.runner.models import RunModels

Work = tuple[EpisodePlan, dict[str, str]]
"""An episode to play and its fingerprint. The caller hands every player the run's whole
work once, then names episodes by id: pickling a plan with its task for every call cost
~5 ms per CalBench episode, more than the call itself."""
T = TypeVar("T")


def calls_models(experiment: Experiment) -> bool:
    """Whether any seat or role of `experiment` names a model (its episodes then wait on
    calls; without one they are short and CPU-bound)."""
    seats = [seat for text in experiment.lineups for seat in parse_lineup(text)]
    seats += [SeatSpec(spec) for spec in experiment.roles.values()]
    return any(seat.is_model for seat in seats)


class EpisodePlayer:
    """Plays episodes of `work` into `trace_dir` with `models`, stamping each trace
    header with `placement` (where it ran); `one_at_a_time`: a CPU-bound run's calls
    (module docstring)."""

    def __init__(
        self,
        benchmark: str,
        experiment: Experiment,
        work: Mapping[str, Work],
        trace_dir: Path,
        models: RunModels,
        placement: Mapping[str, str],
        journal_dir: Path | None,
        one_at_a_time: bool,
    ) -> None:
        self.spec = get_benchmark(benchmark)
        self.experiment = experiment
        self.work = work
        self.trace_dir = trace_dir
        self.models = models
        self.placement = dict(placement)
        self.journal_dir = journal_dir
        self.turn = asyncio.Lock() if one_at_a_time else None
        self.meta = run_metadata()
        """This process's versions and host, collected once: per episode it cost more CPU
        than a reference-protocol game (two `git` subprocesses, package metadata)."""
        # this process only plays episodes: keep the loaded benchmark, suites and tasks out
        # of the cyclic collector's sight, as the CLI does for a local run
        gc.freeze()

    def episode(self, episode_id: str, stop: asyncio.Event) -> Awaitable[EpisodeEnd | None]:
        """`run_episode` for the episode `episode_id` of the work."""
        plan, fingerprint = self.work[episode_id]
        return run_episode(
            self.spec, plan, self.experiment, self.trace_dir, self.models, fingerprint,
            stop, self.placement, self.meta, journal_dir=self.journal_dir,
        )

    async def each(
        self, episode_ids: Sequence[str], play: Callable[[str], Awaitable[T]]
    ) -> list[T]:
        """`play` every id, results in order: all at once, as the local runner overlaps
        episodes, or (`turn`) two at a time after the earlier calls' ones."""
        if self.turn is None:
            return list(await asyncio.gather(*(play(e) for e in episode_ids)))
        async with self.turn:
            window = asyncio.Semaphore(2)  # the next episode plays while one is flushed

            async def in_order(episode_id: str) -> T:
                async with window:
                    return await play(episode_id)

            return list(await asyncio.gather(*(in_order(e) for e in episode_ids)))
