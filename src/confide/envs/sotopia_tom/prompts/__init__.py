"""Prompt templates of the Sotopia-ToM agents, written in our own words.

Each template is a text file beside this module using `string.Template` fields
(`$name`), so JSON braces in the text need no escaping; files are read once and filled by
`confide.llm.prompts.PromptFiles`. `render` fails loudly (`PromptError`) when a field has
no value.
"""

from __future__ import annotations

from confide.llm.prompts import PromptFiles


def render(file: str, package: str = __name__, /, **values: object) -> str:
    """Fill template `file` (its name with the suffix) of `package`, surrounding
    whitespace removed."""
    return PromptFiles(package, suffix="").render(file, **values).strip()
