"""A game's events of one kind, picked out by their distinct types.

Scoring a CalBench game scans its few hundred trace events about fifteen times (paid
costs, messages, resolutions, batches, ...). Every event is a pydantic model, whose
metaclass is an ABCMeta, so `isinstance(event, Kind)` costs an ABC check per event (about
a quarter of a microsecond here, a millisecond per game in all). A game holds a dozen
distinct event types, so each is tested once with `issubclass` (the same answer as
`isinstance` for every event of that type), and the events are then picked by an exact
type lookup.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar, cast

E = TypeVar("E")


def kinds_of(events: Iterable[object], kind: type[Any]) -> frozenset[type]:
    """The distinct types among `events` that are `kind` or derive from it."""
    return frozenset(t for t in set(map(type, events)) if issubclass(t, kind))


def of_kind(events: Sequence[object], kind: type[E]) -> list[E]:
    """The events that are instances of `kind`, in trace order."""
    types = kinds_of(events, kind)
    if not types:
        return []
    return cast(list[E], [e for e in events if type(e) in types])  # each is a `kind`
