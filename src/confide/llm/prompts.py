"""Prompt templates stored as text files inside a package, shared by every environment.

Each environment keeps its prompts (our own words) as files beside a module; `PromptFiles`
names the package, an optional sub-folder and the file suffix, reads each file once, and
fills ``$name`` fields with `string.Template`, so JSON examples in the texts need no
escaping. A missing file or an unfilled field is a `PromptError` naming the file.

Decision: a file's text is used without its surrounding whitespace (every shipped prompt
ends in one newline and starts with text, so this only drops that newline).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

from confide.errors import ConfideError


class PromptError(ConfideError):
    """A prompt file is missing or a template field was not supplied."""


@cache
def _read(package: str, path: str) -> str:
    ref = resources.files(package)
    for part in path.split("/"):
        ref = ref.joinpath(part)
    try:
        return ref.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise PromptError(f"no prompt file {path} in {package}") from None


@dataclass(frozen=True)
class PromptFiles:
    """The prompt files of `package` (in `folder`, if given) ending in `suffix`."""

    package: str
    suffix: str = ".txt"
    folder: str = ""

    def path(self, name: str) -> str:
        """The file of prompt `name`, relative to the package."""
        file = f"{name}{self.suffix}"
        return f"{self.folder}/{file}" if self.folder else file

    def load(self, name: str) -> str:
        """The text of prompt `name` (read once)."""
        return _read(self.package, self.path(name))

    def render(self, name: str, /, **values: object) -> str:
        """Prompt `name` with its ``$fields`` filled from `values` (each as `str`)."""
        try:
            return Template(self.load(name)).substitute({k: str(v) for k, v in values.items()})
        except KeyError as exc:
            raise PromptError(f"prompt {self.path(name)} needs the field {exc.args[0]!r}") from None
