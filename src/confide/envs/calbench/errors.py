"""Error types for CalBench data, and one formatter that turns a pydantic validation error
into a message naming the file, line, field and offending value (DESIGN: bad input gives a
clear exception, never a traceback from deep inside)."""

from __future__ import annotations

from pydantic import ValidationError

from confide.errors import ConfideError

_MAX_LISTED = 5


class CalendarDataError(ConfideError, ValueError):
    """A CalBench task file, label bank or generator config is malformed or inconsistent."""


def field_path(loc: tuple[int | str, ...]) -> str:
    """`('calendars', 2, 5, 'errand', 'cost')` -> `calendars[2][5].errand.cost`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "<record>"


def describe_validation_error(err: ValidationError, where: str) -> str:
    """One line per problem: `where: field: message (value=...)`, at most five lines."""
    lines: list[str] = []
    for item in err.errors()[:_MAX_LISTED]:
        msg = str(item["msg"]).removeprefix("Value error, ")
        loc = tuple(item["loc"])
        if loc:
            value = repr(item.get("input"))
            if len(value) > 80:
                value = value[:77] + "..."
            lines.append(f"{where}: field '{field_path(loc)}': {msg} (value={value})")
        else:
            lines.append(f"{where}: {msg}")
    extra = err.error_count() - _MAX_LISTED
    if extra > 0:
        lines.append(f"{where}: ... and {extra} more problem(s)")
    return "\n".join(lines)
