"""Prompt templates of the Sotopia-ToM agents, written in our own words.

Each template is a text file beside this module using `string.Template` placeholders
(`$name`), so JSON braces in the text need no escaping. `render` fails loudly on a
missing placeholder value.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template


@cache
def template(file: str, package: str = __name__, /) -> Template:
    """The template `file` of `package` (read once)."""
    return Template(files(package).joinpath(file).read_text(encoding="utf-8"))


def render(file: str, package: str = __name__, /, **values: object) -> str:
    """Fill a template; KeyError names a placeholder without a value."""
    return template(file, package).substitute({k: str(v) for k, v in values.items()}).strip()
