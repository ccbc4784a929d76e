"""Entry points through which other packages extend confide.

A distribution adds a benchmark, a participant or a model provider by declaring an entry
point in one of three groups (see docs/usage.md "Plugins" and examples/):

- `confide.benchmarks`: name = benchmark id, object = a `BenchmarkSpec`;
- `confide.participants`: name = seat spec, object = a participant factory
  (`confide.core.custom`);
- `confide.models`: name = provider (the part before the slash of `provider/model`),
  object = `make(name: str, **options) -> ChatModel`.

Discovery reads installed metadata only; a plugin's module is imported when its entry
point is first used, and an entry point that fails to import raises a `PluginError`
naming the entry point and its distribution, so one broken plugin never hides the others.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from confide.errors import ConfideError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

BENCHMARKS = "confide.benchmarks"
PARTICIPANTS = "confide.participants"
MODELS = "confide.models"


class PluginError(ConfideError):
    """An installed plugin could not be loaded, or provides the wrong kind of object."""


def plugins(group: str) -> dict[str, EntryPoint]:
    """The entry points of `group` by name (read once per process; `refresh` forgets)."""
    return _discover(group)[0]


@functools.cache
def _discover(group: str) -> tuple[dict[str, EntryPoint], dict[str, str]]:
    """Entry points by name, and an error for each name two distributions declare with
    different objects: which one won would depend on the order of sys.path. (The same
    declaration seen twice, as from a venv over system site-packages, is one.)
    importlib.metadata is imported here, not at the top: with its email package it is a
    tenth of `confide --help`, which reads no entry point."""
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    clashes: dict[str, str] = {}
    for point in entry_points(group=group):
        first = found.setdefault(point.name, point)
        if first.value != point.value:
            clashes[point.name] = (
                f"{group} entry point {point.name!r} is declared twice: {describe(first)} "
                f"and {describe(point)}; uninstall one of them"
            )
    return found, clashes


def refresh() -> None:
    """Forget discovered entry points (after installing a plugin in this process)."""
    _discover.cache_clear()
    _load.cache_clear()


def describe(point: EntryPoint) -> str:
    """`name = module:attr` and the distribution that declares it, for error messages."""
    dist = point.dist.name if point.dist is not None else "an unknown distribution"
    return f"{point.name} = {point.value} (from {dist})"


def load(group: str, name: str) -> object | None:
    """The object of entry point `name` in `group`, or None when none is declared."""
    points, clashes = _discover(group)
    if name in clashes:
        raise PluginError(clashes[name])
    point = points.get(name)
    return None if point is None else _load(group, point)


@functools.cache
def _load(group: str, point: EntryPoint) -> object:
    try:
        return point.load()
    except Exception as exc:  # any failure inside third-party code is the plugin's
        raise PluginError(
            f"{group} plugin {describe(point)} failed to load: {type(exc).__name__}: {exc}"
        ) from exc
