"""The contract between an environment package and the runner.

Each environment exposes one `BenchmarkSpec`. The runner expands an experiment into
`EpisodeContext`s and awaits `spec.run_episode(ctx)`, which runs one episode, writes its
events to `ctx.trace` and returns an `EpisodeResult`; the runner writes the footer. The
environment never imports the runner.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from confide.core.trace import EnvEvent, Trace, TraceRecorder


class Task(Protocol):
    """A scenario / task card: anything with a stable id."""

    @property
    def id(self) -> str: ...


@dataclass(frozen=True)
class SeatSpec:
    """One seat of a lineup: a reference participant name, or a model spec with an
    optional strategy after a colon (`openai/gpt-5-mini:tom-belief`)."""

    raw: str

    @property
    def is_model(self) -> bool:
        return "/" in self.raw

    @property
    def model(self) -> str | None:
        return self.raw.split(":", 1)[0] if self.is_model else None

    @property
    def strategy(self) -> str | None:
        if not self.is_model:
            return None
        _, _, strategy = self.raw.partition(":")
        return strategy or None

    @property
    def reference(self) -> str | None:
        return None if self.is_model else self.raw

    def __str__(self) -> str:
        return self.raw


def parse_lineup(text: str) -> tuple[SeatSpec, ...]:
    """`a` (one spec for every seat) or `a,b,c` (one per seat). Model specs may contain
    colons but never commas."""
    parts = tuple(SeatSpec(p.strip()) for p in text.split(",") if p.strip())
    if not parts:
        raise ValueError(f"empty lineup {text!r}")
    return parts


def expand_lineup(lineup: Sequence[SeatSpec], seats: Sequence[str]) -> dict[str, SeatSpec]:
    """Bind a lineup to concrete seats: one spec fills every seat, else lengths must match."""
    if len(lineup) == 1:
        return {seat: lineup[0] for seat in seats}
    if len(lineup) != len(seats):
        raise ValueError(
            f"lineup has {len(lineup)} seat specs but the task has {len(seats)} seats "
            f"({', '.join(seats)}); give one spec for all seats or one per seat"
        )
    return dict(zip(seats, lineup, strict=True))


class ModelFactory(Protocol):
    """Turns a model spec into a ChatModel carrying the run's cache, retry, concurrency
    limit and usage meter, and recording every call into `trace` for `seat`."""

    def __call__(self, spec: str, *, seat: str | None, purpose: str, trace: TraceRecorder) -> Any:
        ...


ObservationT = TypeVar("ObservationT", bound=BaseModel, contravariant=True)
ActionT = TypeVar("ActionT", covariant=True)
_Obs = TypeVar("_Obs", bound=BaseModel)
_Act = TypeVar("_Act")


class Participant(Protocol[ObservationT, ActionT]):
    """Anything that sits in a seat: given an observation, it returns an action."""

    async def act(self, observation: ObservationT, /) -> ActionT: ...


@dataclass
class Turns:
    """The one way an environment hands an observation to a participant (issue 13 item
    3, after PettingZoo's `api_test`: the harness, not the environment, sees every turn).

    `ask` reports the observation to `observe` before the participant acts and its
    action to `acted` after, so the conformance checker sees every observation and action
    without the environment reporting them; the environment keeps its phase logic."""

    observe: Callable[[str, BaseModel], None] | None = None
    acted: Callable[[str, object], None] | None = None

    async def ask(
        self, seat: str, observation: _Obs, participant: Participant[_Obs, _Act]
    ) -> _Act:
        """`participant`'s action on `observation`, given to it in `seat`."""
        if self.observe is not None:
            self.observe(seat, observation)
        action = await participant.act(observation)
        if self.acted is not None:
            self.acted(seat, action)
        return action


@dataclass
class EpisodeContext:
    """Everything an environment needs to run one episode."""

    episode_id: str
    task: Any
    lineup: tuple[SeatSpec, ...]
    seed: int
    trace: TraceRecorder
    model_factory: ModelFactory
    condition: str | None = None
    roles: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    turns: Turns = field(default_factory=Turns)
    """How observations reach participants (`ask`); the conformance checker sets its hooks."""

    async def ask(
        self, seat: str, observation: _Obs, participant: Participant[_Obs, _Act]
    ) -> _Act:
        """Give `observation` to `participant` in `seat` and return its action: the only
        way an environment hands a participant an observation (`Turns`)."""
        return await self.turns.ask(seat, observation, participant)

    def model_for(self, seat: str | None, spec: str, purpose: str = "act") -> Any:
        """A chat model for `seat` whose calls are recorded in this episode's trace."""
        return self.model_factory(spec, seat=seat, purpose=purpose, trace=self.trace)


@dataclass
class EpisodeResult:
    """What an episode produced: per-seat rows, episode metrics and the final state."""

    rows: list[dict[str, Any]]
    metrics: dict[str, Any] = field(default_factory=dict)
    final_state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchmarkSpec:
    """How the runner and the CLI talk to one benchmark."""

    id: str
    description: str
    load_tasks: Callable[[str | None, str | None], Sequence[Any]]
    """(suite name or None for the default suite, path to a task file or None) -> tasks."""
    seats: Callable[[Any], Sequence[str]]
    run_episode: Callable[[EpisodeContext], Coroutine[Any, Any, EpisodeResult]]
    default_suite: str
    suites: tuple[str, ...]
    references: tuple[str, ...]
    default_lineup: str
    """The lineup conformance checks and single-lineup runs use."""
    conditions: tuple[str | None, ...] = (None,)
    default_lineups: tuple[str, ...] = ()
    """Lineups a run compares when none are given (default: just `default_lineup`)."""
    summarize: Callable[[Sequence[dict[str, Any]]], list[dict[str, Any]]] | None = None
    """Result rows -> the benchmark's headline table (one dict per table row)."""
    private_markers: Callable[[Any], dict[str, list[str]]] | None = None
    """Task -> per seat, strings of its private state no other seat may observe unless
    a message delivered it (used by the conformance no-leak check)."""
    write_outputs: Callable[[Path, Sequence[Trace]], object] | None = None
    """(run dir, successful traces) -> extra benchmark files (e.g. CalBench's privacy
    CSVs, Incognita's tables and figures); the return value is ignored."""
    events: tuple[type[EnvEvent], ...] = ()
    """The benchmark's environment event classes (`envs/<id>/events.py`), one per kind:
    the trace reader validates its `env` lines against them (`confide.core.trace`)."""
