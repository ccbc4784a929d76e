"""Pydantic models built from values the runtime already knows to be valid.

Validation belongs at the trust boundary: model output, files, user input (issue 15).
An environment's own hot path (observations built from its state, the events it records,
the messages its postbox routes, a reference protocol's tool calls) creates hundreds of
models per game from values of exactly the declared types; validating each again costs
more than the game logic. `trusted(cls, **values)` makes the same instance validation
would make (same fields, same defaults, same `model_fields_set`, so the same JSON) without
running the validator. The caller guarantees the types, e.g. a tuple where the field is a
tuple: nothing is coerced. A missing required field or an unknown one is still an error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__
_new = object.__new__


class _Layout:
    """A model class's fields in declaration order with their defaults."""

    __slots__ = ("factories", "names", "required", "template")

    def __init__(self, cls: type[BaseModel]) -> None:
        self.template: dict[str, Any] = {}
        self.factories: list[tuple[str, Callable[[], Any]]] = []
        required = []
        for name, info in cls.model_fields.items():
            self.template[name] = None
            if info.default_factory is not None:
                self.factories.append((name, info.default_factory))  # type: ignore[arg-type]
            elif info.is_required():
                required.append(name)
            else:
                self.template[name] = info.default
        self.required = frozenset(required)
        self.names = frozenset(self.template)


@functools.cache
def _layout(cls: type[BaseModel]) -> _Layout:
    if (
        cls.model_config.get("extra") == "allow"
        or cls.__pydantic_post_init__
        or cls.__private_attributes__
    ):
        raise TypeError(
            f"trusted() cannot build {cls.__name__} (extra fields, private attributes or "
            "post-init)"
        )
    return _Layout(cls)


def trusted(cls: type[M], /, **values: Any) -> M:
    """An instance of `cls` holding `values` (already of the declared types) and the
    defaults of the fields not given, built without validation (module docstring)."""
    layout = _layout(cls)
    if not (layout.required.issubset(values) and layout.names.issuperset(values)):
        missing = sorted(layout.required - values.keys())
        unknown = sorted(values.keys() - layout.names)
        raise TypeError(f"{cls.__name__}: missing field(s) {missing}, unknown field(s) {unknown}")
    data = {**layout.template, **values}
    for name, factory in layout.factories:
        if name not in values:
            data[name] = factory()
    model = _new(cls)
    _set(model, "__dict__", data)
    _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model
