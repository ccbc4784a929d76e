"""Pydantic models built from values the runtime already knows to be valid.

Validation belongs at the trust boundary: model output, files, user input.
An environment's own hot path (observations built from its state, the events it records,
the messages its postbox routes, a reference protocol's tool calls) creates hundreds of
models per game from values of exactly the declared types; validating each again costs
more than the game logic. `trusted(cls, **values)` makes the same instance validation
would make (same fields, same defaults, same `model_fields_set`, so the same JSON) without
running the validator. The caller guarantees the types, e.g. a tuple where the field is a
tuple: nothing is coerced. A missing required field or an unknown one is still an error.

`builder(cls)` is the constructor `trusted` calls, for a hot path that builds one class
many times: a function generated once per class whose keyword-only parameters are the
fields, so Python's own argument binding checks names (no per-call set arithmetic).
`builder(cls, *names)` takes exactly the fields `names`, all required, for a call site
that always passes the same ones (an engine's events): its set of given fields is a
constant, so a call does no test per field at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__
_new = object.__new__
_UNSET: Any = object()
"""Default of an optional parameter: tells "not given" from any given value."""


_built: dict[tuple[type[BaseModel], tuple[str, ...] | None], Callable[..., Any]] = {}


def builder(cls: type[M], *given: str) -> Callable[..., M]:
    """`cls`'s trusted constructor: keyword arguments only, one per field (module
    docstring); generated on first use. With `given` field names it takes exactly those,
    all required, and the other fields keep their defaults: the same instance for a
    call site that always passes the same fields, with no per-call test of which ones
    came (the hot path of an engine that builds one event shape hundreds of times)."""
    key = (cls, given or None)
    made = _built.get(key)
    if made is None:
        made = _built[key] = _generate(cls, given or None)
    return made


def _generate(cls: type[BaseModel], given: tuple[str, ...] | None) -> Callable[..., Any]:
    if (
        cls.model_config.get("extra") == "allow"
        or cls.__pydantic_post_init__
        or cls.__private_attributes__
    ):
        raise TypeError(
            f"trusted() cannot build {cls.__name__} (extra fields, private attributes or "
            "post-init)"
        )
    # generated names start with "_", which no pydantic field name does
    scope: dict[str, Any] = {
        "_cls": cls, "_new": _new, "_set": _set, "_UNSET": _UNSET, "_setof": set
    }
    source = _fixed(cls, given, scope) if given is not None else _general(cls, scope)
    # generated from the class's own field names; a file name per class keeps profiles apart
    exec(compile(source, f"<trusted {cls.__module__}.{cls.__qualname__}>", "exec"), scope)
    build: Callable[..., Any] = scope["build"]
    build.__qualname__ = f"{cls.__name__}.trusted"
    return build


def _general(cls: type[BaseModel], scope: dict[str, Any]) -> str:
    """The source of the constructor taking any of the fields."""
    params, entries, defaults = [], [], []
    required = []
    for index, (name, info) in enumerate(cls.model_fields.items()):
        entries.append(f"{name!r}: {name}")
        if info.default_factory is not None:
            scope[f"_f{index}"] = info.default_factory
            params.append(f"{name}=_UNSET")
            defaults.append(f"    if {name} is _UNSET: {name} = _f{index}()\n"
                            f"    else: _given.add({name!r})\n")
        elif info.is_required():
            params.append(name)
            required.append(repr(name))
        else:
            scope[f"_d{index}"] = info.default
            params.append(f"{name}=_UNSET")
            defaults.append(f"    if {name} is _UNSET: {name} = _d{index}\n"
                            f"    else: _given.add({name!r})\n")
    given = "{" + ", ".join(required) + "}" if required else "_setof()"
    return (
        f"def build(*, {', '.join(params)}):\n" if params else "def build():\n"
    ) + (
        f"    _given = {given}\n"
        + "".join(defaults)
        + _body(entries, "_given")
    )


def _fixed(cls: type[BaseModel], given: tuple[str, ...], scope: dict[str, Any]) -> str:
    """The source of the constructor taking exactly the fields `given`."""
    fields = cls.model_fields
    unknown = [n for n in given if n not in fields]
    missing = [n for n, f in fields.items() if f.is_required() and n not in given]
    if unknown or missing or len(set(given)) != len(given):
        raise TypeError(
            f"builder({cls.__name__}): unknown field(s) {unknown}, missing required "
            f"field(s) {missing}, or a field named twice in {list(given)}"
        )
    entries = []
    for index, (name, info) in enumerate(fields.items()):
        if name in given:
            entries.append(f"{name!r}: {name}")
        elif info.default_factory is not None:
            scope[f"_f{index}"] = info.default_factory
            entries.append(f"{name!r}: _f{index}()")
        else:
            scope[f"_d{index}"] = info.default
            entries.append(f"{name!r}: _d{index}")
    names = "{" + ", ".join(repr(n) for n in given) + "}"
    return f"def build(*, {', '.join(given)}):\n" + _body(entries, names)


def _body(entries: list[str], given: str) -> str:
    return (
        "    _model = _new(_cls)\n"
        + f"    _set(_model, '__dict__', {{{', '.join(entries)}}})\n"
        + f"    _set(_model, '__pydantic_fields_set__', {given})\n"
        + "    _set(_model, '__pydantic_extra__', None)\n"
        + "    _set(_model, '__pydantic_private__', None)\n"
        + "    return _model\n"
    )


def trusted(cls: type[M], /, **values: Any) -> M:
    """An instance of `cls` holding `values` (already of the declared types) and the
    defaults of the fields not given, built without validation (module docstring)."""
    try:
        return builder(cls)(**values)
    except TypeError:
        names = cls.model_fields
        missing = sorted(n for n, f in names.items() if f.is_required() and n not in values)
        unknown = sorted(values.keys() - names.keys())
        if missing or unknown:
            raise TypeError(
                f"{cls.__name__}: missing field(s) {missing}, unknown field(s) {unknown}"
            ) from None
        raise
