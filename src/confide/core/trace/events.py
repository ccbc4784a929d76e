"""The trace's schema: the typed events of an episode and the `Trace` they make up.

A trace is an `episode_start` header (config, seeds, versions, scenario id), then events,
then an `episode_end` footer (status, final state, metrics and the result rows); the
writer (`writer.py`) stores it, the reader (`reader.py`) reads it back and `paths.py`
says where it lives.

Environment events are typed: each benchmark declares one `EnvEvent` subclass per kind
of event in its `envs/<id>/events.py` (after inspect_ai's `event` package) and lists them
in `BenchmarkSpec.events`; the reader validates every `env` line against the classes of the
benchmark named in the header (a discriminated union on `name`), so a reader matches
classes, never names, and reads typed fields, never dictionary keys. Schema version 2
introduced them (the JSON of an event is unchanged; its `data` is now validated); a trace
of schema 1 is refused with a clear error rather than read half way.

Events carry `ts` (wall-clock seconds since the episode started) and model calls carry
latencies; `canonical_events` drops exactly those so two runs of a deterministic lineup
compare equal.

This module imports nothing that reaches the registry, so `core.benchmark` can name its
classes without closing an import circle (the reader looks specs up; the schema does not).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from confide.core.message import Message
from confide.errors import ConfideError

SCHEMA_VERSION = 2
"""2: typed environment events (module docstring); 1: untyped `data` dictionaries."""
VOLATILE_KEYS = frozenset({"ts", "latency_s", "cached", "started_at", "placement"})
"""Differ between two runs of the same episode (`placement`: the host and Ray worker
that ran it)."""
PROMPT_PREFIX = "prompt_prefix"
"""The field of a `model_call` line that stores its prompt's shared prefix by reference
(`writer.py` writes it, `reader.py` resolves it)."""


class TraceError(ConfideError):
    """A trace file is missing, truncated or malformed."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ts: float = 0.0


class EpisodeStart(_Event):
    """Header: everything needed to reproduce the episode."""

    kind: Literal["episode_start"] = "episode_start"
    schema_version: int = SCHEMA_VERSION
    episode_id: str
    benchmark: str
    scenario_id: str
    seed: int
    lineup: list[str] = Field(default_factory=list)
    condition: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    fingerprint: dict[str, str] = Field(default_factory=dict)
    """Everything that determines the episode (`confide.runner.fingerprint`); a resumed
    run reuses the episode only when it is unchanged."""
    started_at: float = 0.0


class MessageDelivered(_Event):
    """A message as routed by the postbox, with its resolved recipient set."""

    kind: Literal["message"] = "message"
    message: Message


class ModelCall(_Event):
    """One prompt sent to a chat model and what came back (or the error, with its class:
    transient, validation, capability or permanent)."""

    kind: Literal["model_call"] = "model_call"
    seat: str | None = None
    purpose: str = "act"
    model: str
    messages: list[dict[str, Any]]
    config: dict[str, Any] = Field(default_factory=dict)
    completion: dict[str, Any] | None = None
    error: str | None = None
    error_class: str | None = None
    latency_s: float = 0.0
    cached: bool = False
    part: str | None = None
    """The seat (as the lineup names it) or role whose spend this call is, when `seat`
    does not say it (a judge with no seat, a customer's gate call, a desk); None: `seat`."""
    retries: int = 0
    """Provider attempts retried before this call's outcome (transient errors)."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        """`part` and `retries` are left out when unset, so traces of calls that need
        neither keep their earlier bytes."""
        data = handler(self)
        if isinstance(data, dict):
            if data.get("part") is None:
                data.pop("part", None)
            if not data.get("retries"):
                data.pop("retries", None)
        return data


class EventData(BaseModel):
    """The typed payload of one kind of environment event (each event class narrows it)."""

    model_config = ConfigDict(extra="forbid")


class EnvEvent(_Event):
    """Base of the environment-specific events (phase change, decision, tool execution,
    gate release...): a benchmark subclasses it once per kind, narrowing `name` to a
    Literal and `data` to its own `EventData`. `visible_to` lists the seats that observed
    it (None = none of them, i.e. bookkeeping only), which the per-agent printer uses."""

    kind: Literal["env"] = "env"
    name: str
    seat: str | None = None
    round: int | None = None
    data: EventData = Field(default_factory=EventData)
    visible_to: list[str] | None = None

    def fields(self) -> dict[str, Any]:
        """The payload as plain JSON data (for printers that show any event)."""
        return self.data.model_dump(mode="json")

    def shown_state(self) -> dict[str, str]:
        """Private state this event showed its one viewer (e.g. a rendered calendar), by
        label, for the viewer's state panel; none unless an event class says so."""
        return {}


E = TypeVar("E", bound=BaseModel)


class ScoringStart(_Event):
    """Where play ends and scoring begins (`confide.core.scoring`): the events before it
    are the played episode, those after it what scoring did (judge calls, verdicts), done
    with the role bindings it names. `confide rescore` keeps what comes before."""

    kind: Literal["scoring"] = "scoring"
    roles: dict[str, str] = Field(default_factory=dict)


class EpisodeEnd(_Event):
    """Footer: outcome, final state, episode metrics and one result row per seat."""

    kind: Literal["episode_end"] = "episode_end"
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    final_state: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    tables: Any = Field(default=None, exclude=True)
    """The episode's `EpisodeResult.tables`, carried from the scorer to the run's output
    phase; never written to the trace (None when read back)."""
    spend: Any = Field(default=None, exclude=True)
    """What the episode spent on models by seat and role (`confide.runner.spend`), taken
    from its events by the runner for the result rows; never written to the trace."""


TraceEvent = Annotated[
    EpisodeStart | MessageDelivered | ModelCall | EnvEvent | ScoringStart | EpisodeEnd,
    Field(discriminator="kind"),
]


@functools.cache
def event_adapter(env_events: tuple[type[EnvEvent], ...] = ()) -> TypeAdapter[TraceEvent]:
    """Parses one event: a core event, or one of `env_events` chosen by its `name`."""
    members: list[Any] = [EpisodeStart, MessageDelivered, ModelCall, ScoringStart, EpisodeEnd]
    if len(env_events) == 1:
        members.append(env_events[0])
    elif env_events:
        members.append(Annotated[Union[env_events], Field(discriminator="name")])  # noqa: UP007
    union: Any = Annotated[Union[tuple(members)], Field(discriminator="kind")]  # noqa: UP007
    adapter: TypeAdapter[TraceEvent] = TypeAdapter(union)
    return adapter


class Trace(BaseModel):
    """A complete (or partial) episode as read back from disk."""

    path: str
    header: EpisodeStart
    events: list[TraceEvent]
    footer: EpisodeEnd | None

    @property
    def complete(self) -> bool:
        return self.footer is not None

    def messages(self) -> list[Message]:
        return [e.message for e in self.events if isinstance(e, MessageDelivered)]

    def of(self, kind: type[E]) -> list[E]:
        """The events of one class (e.g. an environment's `BatchApplied`), in order."""
        return [e for e in self.events if isinstance(e, kind)]

    def model_calls(self) -> list[ModelCall]:
        return [e for e in self.events if isinstance(e, ModelCall)]


def canonical_events(events: Iterable[BaseModel]) -> list[Any]:
    """Events as plain data without timestamps, latencies and cache flags, for comparing
    two runs of a deterministic lineup."""
    return [_strip(json.loads(e.model_dump_json())) for e in events]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
