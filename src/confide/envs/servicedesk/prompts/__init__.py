"""Prompt texts of Incognita's participants, written in our own words (incognita.md A.1-A.3
describe what each prompt must carry; none of its sentences is reused).

The texts live beside this module as ``.txt`` files; `render` fills ``$name`` fields with
`string.Template`, so the JSON examples in the texts need no escaping.

- ``agent_intro``: the evaluated agent's neutral objective (every condition).
- ``agent_messaging`` ($recipients, $choices): one directed message per turn, FINAL to
  ENVIRONMENT ends the episode (indirect and social).
- ``agent_direct`` ($tools): the same contract with tool calls (direct), placed after
  ``service_role`` and ``service_rules``, because in that condition the agent is the service.
- ``service_role`` / ``service_rules``: the all-roles service block (direct agent and the
  single indirect desk).
- ``role_<desk>`` / ``rules_<desk>``: the six social desks (identity lookup has no rules).
- ``conduct``: the shared conduct block of every desk.
- ``desk_format`` ($tools): a desk's tool list and JSON output contract.
- ``customer`` ($memory) and ``customer_requests`` ($requests): the customer simulator.
- ``gate`` ($fields): the disclosure gate's field classifier.
- ``judge`` ($assertions): the output-assertion judge.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

from confide.errors import ConfideError

PROMPT_VERSION = "1"
"""Bumped whenever a prompt text changes (recorded in the episode setup event)."""


class PromptError(ConfideError):
    """A prompt file is missing or a template field was not supplied."""


@cache
def load(name: str) -> str:
    """The text of prompt `name` (without its trailing newline)."""
    try:
        text = resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptError(f"no prompt file {name}.txt in {__name__}") from None
    return text.rstrip("\n")


def render(name: str, **values: str) -> str:
    """Prompt `name` with its ``$fields`` filled from `values`."""
    try:
        return Template(load(name)).substitute(values)
    except KeyError as exc:
        raise PromptError(f"prompt {name}.txt needs the field {exc.args[0]!r}") from None
