"""A user's own agent in a seat: `py:package.module:factory`, or the name of a
`confide.participants` entry point (confide.plugins).

The factory is called once per seat and episode as `factory(seat, ctx)`, with the seat
name and the `EpisodeContext` (task, seed, options, `ctx.model_for` for recorded model
calls), and returns a participant: an object with a `name` and an `async act(observation)`
that answers the benchmark's observation type with its action type (README "Plugins"
lists them per benchmark). A factory may carry `benchmarks = ("demo", ...)`: the ids it
serves; any other benchmark refuses it before an episode starts.

Environments call `custom_participant` for a seat spec that names none of their own
participants; preflight calls `resolve_participant` to check every spec up front.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from confide import plugins
from confide.errors import ConfideError

if TYPE_CHECKING:
    from confide.core.benchmark import EpisodeContext, SeatSpec

PREFIX = "py:"

ParticipantFactory = Callable[[str, "EpisodeContext"], Any]


class CustomParticipantError(ConfideError):
    """A `py:` seat spec or participant plugin cannot fill the seat."""


def resolve_participant(spec: SeatSpec | str, benchmark: str) -> ParticipantFactory | None:
    """The factory `spec` names for a seat of `benchmark`: a `py:module:attr` spec is
    imported, a plain name is looked up among `confide.participants` entry points. None
    when the spec is neither (a model spec, or a name only the benchmark can judge)."""
    raw = str(spec)
    if raw.startswith(PREFIX):
        factory = _import(raw)
    elif "/" in raw:
        return None
    else:
        factory = plugins.load(plugins.PARTICIPANTS, raw)
        if factory is None:
            return None
    if not callable(factory):
        raise CustomParticipantError(
            f"seat spec {raw!r} names no participant factory (got {type(factory).__name__}); "
            "a factory is a callable taking the seat name and the episode context"
        )
    served = getattr(factory, "benchmarks", None)
    if served is not None and benchmark not in served:
        raise CustomParticipantError(
            f"seat spec {raw!r} serves {', '.join(served)}, not {benchmark}"
        )
    return factory


def custom_participant(
    benchmark: str, seat: str, spec: SeatSpec, ctx: EpisodeContext
) -> Any | None:
    """The participant a custom seat spec builds for `seat`, checked to have the
    participant shape; None when `spec` names no custom participant."""
    factory = resolve_participant(spec, benchmark)
    if factory is None:
        return None
    try:
        participant = factory(seat, ctx)
    except Exception as exc:  # the user's factory failed: say which spec and seat
        raise CustomParticipantError(
            f"seat spec {spec.raw!r} failed to build {seat}: {type(exc).__name__}: {exc} "
            "(a factory is called as factory(seat, ctx))"
        ) from exc
    act = getattr(participant, "act", None)
    if not isinstance(getattr(participant, "name", None), str) or not (
        inspect.iscoroutinefunction(act)
    ):
        raise CustomParticipantError(
            f"seat spec {spec.raw!r} built a {type(participant).__name__} for {seat}; a "
            "participant needs a `name` string and an `async def act(observation)`"
        )
    return participant


def _import(raw: str) -> object:
    """The object `py:package.module:attr` names (attr may be dotted)."""
    module_name, sep, attr = raw.removeprefix(PREFIX).partition(":")
    if not sep or not module_name or not attr:
        raise CustomParticipantError(
            f"seat spec {raw!r} must have the form py:package.module:factory"
        )
    try:
        target: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise CustomParticipantError(
            f"seat spec {raw!r}: cannot import {module_name!r} ({exc}); install it or put "
            "its directory on PYTHONPATH"
        ) from None
    except Exception as exc:  # the user's module failed while importing
        raise CustomParticipantError(
            f"seat spec {raw!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise CustomParticipantError(
                f"seat spec {raw!r}: module {module_name!r} has no attribute {attr!r}"
            ) from None
    return target
