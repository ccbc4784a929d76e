"""`check_env`: the conformance checker every environment must pass (in the spirit of
Gymnasium's `check_env` and PettingZoo's API tests).

It runs one task twice with the same seed and checks:

1. Determinism: both traces are identical apart from timestamps and latencies.
2. No leaks, structurally: every `Message` found anywhere inside an observation given to
   seat S was sent by S or delivered to S (checked by message id against the trace).
3. No leaks, by content: the private markers of seat T (strings from T's private state,
   supplied by the benchmark) never appear in an observation of S != T unless a message
   delivered to S carried them.
4. The trace is well formed: it round-trips through JSON, read back with the benchmark's
   declared event classes (`BenchmarkSpec.events`), and its message ids are 0..n-1.
5. Every observation got an action: the environment handed observations to participants
   only through `EpisodeContext.ask`, which reports both to the checker.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from confide.core.benchmark import (
    BenchmarkSpec,
    EpisodeContext,
    EpisodeResult,
    Turns,
    parse_lineup,
)
from confide.core.message import Message
from confide.core.trace import (
    EnvEvent,
    MessageDelivered,
    TraceError,
    TraceRecorder,
    canonical_events,
    parse_events,
)
from confide.errors import ConfideError


class ConformanceError(ConfideError):
    """An environment broke the runtime contract."""


class Capture:
    """One episode's trace and every observation each seat was given and action it took,
    as `EpisodeContext.ask` reported them (the environment reports nothing by hand).

    What the checks need is taken from an observation when it is given (the messages in
    it, which are frozen, and its strings, from a fast `model_dump`), so a later change
    to the object cannot hide a leak; `observations` keeps the objects themselves, for
    inspection (a deep copy of each cost 70% of a CalBench episode)."""

    def __init__(self, *, collect: bool = True) -> None:
        self.collect = collect
        self.trace = TraceRecorder("conformance")
        self.observations: dict[str, list[BaseModel]] = defaultdict(list)
        self.actions: dict[str, list[object]] = defaultdict(list)
        self.shown: dict[str, list[tuple[list[Message], str]]] = defaultdict(list)
        self.result: EpisodeResult | None = None

    def observe(self, seat: str, observation: BaseModel) -> None:
        self.observations[seat].append(observation)
        if self.collect:
            self.shown[seat].append(
                (list(_messages_in(observation)), _joined(observation.model_dump()))
            )

    def acted(self, seat: str, action: object) -> None:
        self.actions[seat].append(action)

    @property
    def asks(self) -> int:
        """How many observations were handed to participants."""
        return sum(len(v) for v in self.observations.values())


def run_once(
    spec: BenchmarkSpec,
    task: Any,
    lineup: str,
    *,
    seed: int = 0,
    condition: str | None = None,
    model_factory: Any = None,
    options: dict[str, Any] | None = None,
    roles: dict[str, str] | None = None,
    collect: bool = True,
) -> Capture:
    """Run one episode in memory, capturing observations (and, with `collect`, what the
    leak checks need from them)."""
    capture = Capture(collect=collect)
    ctx = EpisodeContext(
        episode_id="conformance",
        task=task,
        lineup=parse_lineup(lineup),
        seed=seed,
        trace=capture.trace,
        model_factory=model_factory or _no_models,
        condition=condition,
        roles=dict(roles or {}),
        options=dict(options or {}),
        turns=Turns(observe=capture.observe, acted=capture.acted),
    )
    capture.result = asyncio.run(spec.run_episode(ctx))
    return capture


def check_env(
    spec: BenchmarkSpec,
    task: Any,
    lineup: str | None = None,
    *,
    seed: int = 0,
    condition: str | None = None,
    model_factory: Any = None,
    options: dict[str, Any] | None = None,
    roles: dict[str, str] | None = None,
) -> Capture:
    """Run the checks above; raise ConformanceError naming the first violation."""
    lineup = lineup or spec.default_lineup
    kwargs: dict[str, Any] = dict(
        seed=seed, condition=condition, model_factory=model_factory, options=options, roles=roles
    )
    first = run_once(spec, task, lineup, **kwargs)
    second = run_once(spec, task, lineup, collect=False, **kwargs)
    _check_determinism(first, second)
    _check_roundtrip(first, spec.events)
    _check_messages(first)
    _check_turns(first)
    if spec.private_markers is not None:
        _check_markers(first, spec.private_markers(task))
    return first


def _check_determinism(a: Capture, b: Capture) -> None:
    ea, eb = canonical_events(a.trace.events), canonical_events(b.trace.events)
    for index, (x, y) in enumerate(zip(ea, eb, strict=False)):
        if x != y:
            raise ConformanceError(f"same seed, different trace at event {index}: {x} != {y}")
    if len(ea) != len(eb):
        raise ConformanceError(f"same seed, different trace lengths {len(ea)} != {len(eb)}")
    if a.result is None or b.result is None or a.result.rows != b.result.rows:
        raise ConformanceError("same seed, different result rows")


def _check_roundtrip(capture: Capture, env_events: Sequence[type[EnvEvent]]) -> None:
    lines = [e.model_dump_json() for e in capture.trace.events]
    try:
        again = parse_events(lines, "<conformance>", env_events)
    except TraceError as exc:
        raise ConformanceError(
            f"the trace does not read back with the benchmark's event classes: {exc}"
        ) from None
    if canonical_events(again) != canonical_events(capture.trace.events):
        raise ConformanceError("trace events do not round-trip through JSON")
    ids = [e.message.id for e in capture.trace.events if isinstance(e, MessageDelivered)]
    if ids != list(range(len(ids))):
        raise ConformanceError(f"message ids are not 0..n-1 in delivery order: {ids[:20]}")


def _check_turns(capture: Capture) -> None:
    for seat, observations in capture.observations.items():
        acted = len(capture.actions.get(seat, ()))
        if acted != len(observations):
            raise ConformanceError(
                f"{seat} was given {len(observations)} observation(s) but took {acted} action(s)"
            )


def _delivered(capture: Capture) -> dict[int, Message]:
    return {
        e.message.id: e.message
        for e in capture.trace.events
        if isinstance(e, MessageDelivered)
    }


def _check_messages(capture: Capture) -> None:
    delivered = _delivered(capture)
    for seat, shown in capture.shown.items():
        for messages, _ in shown:
            for message in messages:
                known = delivered.get(message.id)
                if known is None or known != message:
                    raise ConformanceError(
                        f"{seat} observed message {message.id} that is not in the trace as sent"
                    )
                if not known.visible_to(seat):
                    raise ConformanceError(
                        f"leak: {seat} observed message {message.id} from {known.sender} "
                        f"addressed to {list(known.recipients)}"
                    )


def _check_markers(capture: Capture, markers: dict[str, list[str]]) -> None:
    """Markers are matched against decoded string values on both sides (never against
    one encoding on one side and another on the other), so non-ASCII markers cannot
    raise false leaks and markers holding quotes, backslashes or newlines are found."""
    delivered = _delivered(capture)
    for seat, observations in capture.shown.items():
        heard = _joined([[m.text, m.payload] for m in delivered.values() if m.visible_to(seat)])
        for _, shown in observations:
            for owner, owner_markers in markers.items():
                if owner == seat:
                    continue
                for marker in owner_markers:
                    if marker and marker in shown and marker not in heard:
                        raise ConformanceError(
                            f"leak: {seat}'s observation contains {owner}'s private {marker!r}"
                        )


def _joined(value: Any) -> str:
    """Every string in `value`, NUL-separated: a marker (which holds no NUL) is in the
    result exactly when it is inside one of the strings."""
    return "\0".join(_strings(value))


def _strings(value: Any) -> Iterator[str]:
    """Every string (value or key) nested in plain data, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)


def _messages_in(value: Any) -> Iterator[Message]:
    """Every Message nested anywhere in a pydantic model, mapping or sequence."""
    if isinstance(value, Message):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _messages_in(getattr(value, name))
    elif isinstance(value, dict):
        for item in value.values():
            yield from _messages_in(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _messages_in(item)


def _no_models(spec: str, **_: Any) -> Any:
    raise ConformanceError(f"this check was given no model factory, but a seat asked for {spec!r}")
