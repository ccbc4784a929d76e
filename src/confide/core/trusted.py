"""Pydantic models built from values the runtime already knows to be valid.

Validation belongs at the trust boundary: model output, files, user input (issue 15).
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


_built: dict[type[BaseModel], Callable[..., Any]] = {}


def builder(cls: type[M]) -> Callable[..., M]:
    """`cls`'s trusted constructor: keyword arguments only, one per field (module
    docstring); generated on first use."""
    made = _built.get(cls)
    if made is None:
        made = _built[cls] = _generate(cls)
    return made


def _generate(cls: type[BaseModel]) -> Callable[..., Any]:
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
    source = (
        f"def build(*, {', '.join(params)}):\n" if params else "def build():\n"
    ) + (
        f"    _given = {given}\n"
        + "".join(defaults)
        + "    _model = _new(_cls)\n"
        + f"    _set(_model, '__dict__', {{{', '.join(entries)}}})\n"
        + "    _set(_model, '__pydantic_fields_set__', _given)\n"
        + "    _set(_model, '__pydantic_extra__', None)\n"
        + "    _set(_model, '__pydantic_private__', None)\n"
        + "    return _model\n"
    )
    # generated from the class's own field names; a file name per class keeps profiles apart
    exec(compile(source, f"<trusted {cls.__module__}.{cls.__qualname__}>", "exec"), scope)
    build: Callable[..., Any] = scope["build"]
    build.__qualname__ = f"{cls.__name__}.trusted"
    return build


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
