"""The contract between an environment package and the runner.

Each environment exposes one `BenchmarkSpec`. The runner expands an experiment into
`EpisodeContext`s and awaits `spec.run_episode(ctx)`, which runs one episode, writes its
events to `ctx.trace` and returns an `EpisodeResult`; the runner writes the footer. An
episode is played, then scored from its trace by `spec.score_episode`
(`confide.core.scoring`). The environment never imports the runner.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol

from pydantic import BaseModel
from typing_extensions import TypeVar

from confide.core.options import NoOptions
from confide.core.sampling import Sampling, sampling_for

if TYPE_CHECKING:  # annotations only
    from confide.core.trace.events import EnvEvent, Trace
    from confide.core.trace.writer import TraceRecorder
    from confide.core.viewing import ViewHooks

TaskT = TypeVar("TaskT", default=Any)


class Task(Protocol):
    """A scenario / task card: anything with a stable id."""

    @property
    def id(self) -> str: ...


@dataclass(frozen=True)
class SeatSpec:
    """One seat of a lineup: a reference participant name, or a model spec with an
    optional strategy after a colon (`openai/gpt-5-mini:tom-belief`), or a user's own
    agent: `py:package.module:factory` or a `confide.participants` entry point name
    (core/custom.py; these count as references here, the environment resolves them)."""

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

    def __call__(
        self,
        spec: str,
        *,
        seat: str | None,
        purpose: str,
        trace: TraceRecorder,
        sampling: Sampling | None = None,
        part: str | None = None,
    ) -> Any: ...


ObservationT = TypeVar("ObservationT", bound=BaseModel, contravariant=True)
ActionT = TypeVar("ActionT", covariant=True)
_Obs = TypeVar("_Obs", bound=BaseModel)
_Act = TypeVar("_Act")


class Participant(Protocol[ObservationT, ActionT]):
    """Anything that sits in a seat: given an observation, it returns an action."""

    async def act(self, observation: ObservationT, /) -> ActionT: ...


@dataclass
class Turns:
    """The one way an environment hands an observation to a participant (after PettingZoo's
    `api_test`: the harness, not the environment, sees every turn).

    `ask` reports the observation to `observe` before the participant acts and its
    action to `acted` after, so the conformance checker sees every observation and action
    without the environment reporting them; the environment keeps its phase logic."""

    observe: Callable[[str, BaseModel], None] | None = None
    acted: Callable[[str, object], None] | None = None

    def ask(
        self, seat: str, observation: _Obs, participant: Participant[_Obs, _Act]
    ) -> Awaitable[_Act]:
        """`participant`'s action on `observation`, given to it in `seat` (to await).
        Without hooks it is the participant's own `act`: no coroutine in between, which
        a reference game, hundreds of turns of a few microseconds each, would notice."""
        if self.observe is None and self.acted is None:
            return participant.act(observation)
        return self._hooked(seat, observation, participant)

    async def _hooked(
        self, seat: str, observation: _Obs, participant: Participant[_Obs, _Act]
    ) -> _Act:
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
    sampling: dict[str, Sampling] = field(default_factory=dict)
    """The experiment's sampling settings by seat, `seats` or role (`core.sampling`)."""
    seat_names: frozenset[str] = frozenset()
    """The task's seats, which the `seats` sampling entry applies to."""
    turns: Turns = field(default_factory=Turns)
    """How observations reach participants (`ask`); the conformance checker sets its hooks."""
    trace_path: str = ""
    """Where the run keeps this episode's finished trace (the runner sets it; empty
    outside a run), which a score function names in the table rows it computes
    (`EpisodeResult.tables`): a worker may write the trace elsewhere first."""

    def ask(
        self, seat: str, observation: _Obs, participant: Participant[_Obs, _Act]
    ) -> Awaitable[_Act]:
        """Give `observation` to `participant` in `seat`; await it for its action. The
        only way an environment hands a participant an observation (`Turns`)."""
        return self.turns.ask(seat, observation, participant)

    def model_for(
        self,
        seat: str | None,
        spec: str,
        purpose: str = "act",
        *,
        role: str | None = None,
        lineup_seat: str | None = None,
    ) -> Any:
        """A chat model for `seat` (or for `role`, a non-evaluated part such as the judge)
        whose calls are recorded in this episode's trace and carry the experiment's
        sampling settings for that seat or role. `lineup_seat` names the seat for the
        settings when the trace labels it otherwise. The trace labels the call with the
        part whose spend it is (`ModelCall.part`): `role`, else `lineup_seat`."""
        sampling = sampling_for(
            self.sampling, seat=lineup_seat or seat, role=role, seats=set(self.seat_names)
        )
        extra: dict[str, Any] = {}  # older factories take neither
        if sampling is not None:
            extra["sampling"] = sampling
        part = role or lineup_seat
        if part is not None and part != seat:
            extra["part"] = part
        return self.model_factory(spec, seat=seat, purpose=purpose, trace=self.trace, **extra)


@dataclass
class EpisodeResult:
    """What an episode produced: per-seat rows, episode metrics and the final state."""

    rows: list[dict[str, Any]]
    metrics: dict[str, Any] = field(default_factory=dict)
    final_state: dict[str, Any] = field(default_factory=dict)
    tables: Any = None
    """What the episode adds to the benchmark's run tables (`BenchmarkSpec.write_tables`),
    computed while it is scored, where its events are in memory: it travels in the slim
    footer and the result spool, never into the trace file, so a run builds its tables
    without reading its traces back. Picklable; None: nothing computed."""


@dataclass(frozen=True)
class RoleSpec:
    """A non-evaluated part of an episode bound with `--role NAME=SPEC` (the judge, a
    simulator): its LLM-free `default` (None: unbound, the part is skipped), the other
    LLM-free bindings it accepts besides model specs, whether a lineup with any model
    seat must bind it (an LLM-free default that cannot read model output would score
    such a lineup wrongly), and whether only scoring uses it (`scoring`: the judge), so
    `confide rescore` may bind it anew."""

    name: str
    default: str | None
    description: str
    choices: tuple[str, ...] = ()
    llm_lineup_needs_binding: bool = False
    conditions: tuple[str, ...] = ()
    """The conditions the role takes part in (empty: all); a run of none of them need
    not bind it."""
    scripted_peers: tuple[str, ...] = ()
    """Model specs written for the LLM-free default (the benchmark's own demo mocks, which
    speak its typed protocol): a lineup whose model seats are all among them need not
    bind this role."""
    scoring: bool = False

    @property
    def offline(self) -> tuple[str, ...]:
        """Every LLM-free binding: the default and the other choices."""
        return tuple(dict.fromkeys([*([self.default] if self.default else []), *self.choices]))


@dataclass(frozen=True)
class CallBound:
    """The model calls one seat or role makes in an episode: at most `calls`, or, with
    `calls` None, why no bound is known before the episode is played."""

    calls: int | None
    why: str = ""


CallBounds = Callable[[Any, Mapping[str, SeatSpec], Mapping[str, str], Any, str | None],
                      Mapping[str, CallBound]]
"""(task, seat -> its spec, role -> its binding, the validated options, condition) ->
per model seat and per model-bound role, its `CallBound` (`confide run --dry-run`), and
optionally, under `EPISODE_CALLS`, the bound on all of them together."""


@dataclass(frozen=True)
class CallRange:
    """The model calls one seat or role is expected to make in an episode (`confide run
    --dry-run`'s estimates): `low` to `high` around `expected`, and `source`, where the
    numbers come from (the paper's reported episode lengths, else reference runs or the
    episode's structure)."""

    low: int
    expected: float
    high: int
    source: str


CallEstimates = Callable[[Any, Mapping[str, SeatSpec], Mapping[str, str], Any, str | None],
                         Mapping[str, CallRange]]
"""(task, seat -> its spec, role -> its binding, the validated options, condition) ->
per model seat and per model-bound role, its expected `CallRange`."""
EPISODE_CALLS = "*episode"
"""The key of a bound on every call of the episode together, for seats and roles that
share one budget (a turn goes to one seat, or to either the customer or a desk): each
part can reach its own bound, but not all in the same episode. The dry run's total takes
the smaller of this and the parts' sum."""


@dataclass(frozen=True)
class BenchmarkSpec(Generic[TaskT]):
    """How the runner and the CLI talk to one benchmark, and what it takes as input: its
    options model, roles, reference participants, strategies and conditions, all checked
    by the preflight (`confide.runner.preflight`) before any episode runs."""

    id: str
    description: str
    load_tasks: Callable[[str | None, str | None], Sequence[TaskT]]
    """(suite name or None for the default suite, path to a task file or None) -> tasks."""
    seats: Callable[[TaskT], Sequence[str]]
    run_episode: Callable[[EpisodeContext], Coroutine[Any, Any, EpisodeResult]]
    default_suite: str
    suites: tuple[str, ...]
    participants: tuple[str, ...]
    """The reference (LLM-free) participants a seat can name; model seats take
    `provider/model[:strategy]` and a user's own agent `py:module:factory`."""
    default_lineup: str
    """The lineup conformance checks and single-lineup runs use."""
    conditions: tuple[str | None, ...] = (None,)
    default_conditions: tuple[str | None, ...] | None = None
    """The conditions a run without `conditions` plays (default: every one of
    `conditions`); e.g. Incognita's native anchor runs only when named."""
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
    tables_of: Callable[[Any, Trace], Any] | None = None
    """(task, finished trace) -> the `EpisodeResult.tables` its score function would
    return, for an episode whose footer did not carry them (reused from an earlier run,
    or finished by a worker whose reply was lost)."""
    write_tables: Callable[[Path, Mapping[str, Any]], object] | None = None
    """(run dir, episode id -> `EpisodeResult.tables` of each successful episode, read
    from disk when looked up, in plan order) -> the benchmark's own files, built from what
    scoring computed (CalBench's privacy and audit tables); used instead of
    `write_outputs` when set."""
    score_episode: Callable[[EpisodeContext], Coroutine[Any, Any, EpisodeResult]] | None = None
    """Scores an episode from its played trace alone; `run_episode` is play, then this
    (`confide.core.scoring`), and `confide rescore` calls it on stored traces. None: the
    benchmark cannot be rescored."""
    compare_scores: Callable[[Path, Path], list[dict[str, Any]]] | None = None
    """(source run dir, rescored run dir) -> rows of a table comparing the two runs'
    scores, which it writes into the rescored directory (Sotopia-ToM: judge agreement,
    Table 6). `confide rescore` calls it before the report is built; None: no comparison."""
    options: type[BaseModel] = NoOptions
    """The pydantic model of the environment options (`envs/<id>/options.py`)."""
    roles: tuple[RoleSpec, ...] = ()
    check_strategy: Callable[[str], object] | None = None
    """Raises `ConfideError` for a strategy a model seat (`provider/model:strategy`) cannot
    take; None: model seats take no strategy."""
    load_source_tasks: Callable[[str, str], Sequence[TaskT]] | None = None
    """(task file of a source benchmark, the world it runs on) -> tasks (``--tasks F
    --world W``; Incognita's transformation); None: the benchmark takes no ``--world``."""
    task_problems: Callable[[Sequence[TaskT], Sequence[SeatSpec]], list[str]] | None = None
    """(the run's tasks, every seat of its lineups) -> what a participant cannot do with
    these tasks, reported by the preflight before any episode (Incognita's card-reading
    mocks know only the shipped cards); None: nothing to check."""
    prepare_model: Callable[[str], object] | None = None
    """Called with each model spec of a run before it is built (e.g. to register the
    environment's own mock models)."""
    mocks: tuple[tuple[str, str], ...] = ()
    """The environment's own mock models: (spec, what it is), listed by `confide models
    list` (a demo must say it is one)."""

    events: tuple[type[EnvEvent], ...] = ()
    """The benchmark's environment event classes (`envs/<id>/events.py`), one per kind:
    the trace reader validates its `env` lines against them (`confide.core.trace`)."""
    sampling_defaults: Mapping[str, Sampling] = field(default_factory=dict)
    """The environment's own sampling settings by `seats` or role, exactly as its code
    applies them (e.g. Incognita's simulators at temperature 0, its agent at 1); the
    resolved experiment shows them under the experiment's own `sampling`
    (`confide.runner.resolve`), so every default a run applies is written down."""
    call_bounds: CallBounds | None = None
    """The model calls an episode may make, per seat and role, from the options' turn
    limits and repair budgets; None: not declared (the dry run says so)."""
    call_estimates: CallEstimates | None = None
    """The model calls an episode is expected to make, per seat and role, with a range
    (the benchmark's own knowledge of its episode lengths); None: the dry run estimates
    no tokens or cost."""
    invalid_replies: Callable[[Sequence[Any]], dict[str, int]] | None = None
    """An episode's trace events -> its invalid model replies (replies that never gave a
    usable action) per part: a seat as the lineup names it, or a role. The runner puts
    them beside each part's spend (`confide.runner.spend`); None: none are recorded."""
    view: ViewHooks | None = None
    """What `confide view` shows of this benchmark beyond the generic trace: its leak
    events and per-participant panels (`confide.core.viewing`, `envs/<id>/view.py`)."""
    demo: tuple[str, ...] = ()
    """Participants or model specs whose numbers are made up (a demo, e.g. Incognita's
    card-reading mocks): every output of a run seating one says DEMO (core/demo.py)."""
    published: Path | None = None
    """The folder of the paper's published table rows (`confide.core.published`: CSV files
    and their `tables.json` index), printed beside a run's rows, never mixed into them;
    None: the benchmark ships none."""
    task_group: Callable[[Any], str] | None = None
    """A task's group in the paper's cell counts (CalBench: its cost setting, the N of
    Table 1 being seats per model and setting); the dry run counts each model's seats per
    group. None: per model only."""
    output_imports: tuple[str, ...] = ()
    """Modules its output hooks import only when they run (scipy, matplotlib: slow to
    import); a run whose episodes play in other processes imports them while it waits
    (`confide.runner.outputs.warm_outputs`), so its output phase does not."""

    def role(self, name: str) -> RoleSpec | None:
        return next((r for r in self.roles if r.name == name), None)

    @property
    def score_roles(self) -> tuple[str, ...]:
        """The roles only scoring uses (`RoleSpec.scoring`): `confide rescore` may bind
        them anew."""
        return tuple(role.name for role in self.roles if role.scoring)
