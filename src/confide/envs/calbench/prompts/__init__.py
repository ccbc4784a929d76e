"""Prompt texts of the CalBench LLM agent, written in our own words from the structure
The CalBench paper §A.2 and A.3 describe (none of the paper's prompt sentences is reused).

System prompt (A.2), nine sections, one file each, in this order: ``system_rules``,
``system_constraints``, ``system_strategy``, ``system_slots``, ``system_tools``,
``system_phases``, ``system_format`` (identical for every agent and game, so they form a
stable cacheable prefix), then ``system_identity`` ($agent, $agents, $num_agents) and
``system_environment`` ($num_slots, $last_slot, $channel, $channel_note, $retry_rule).

Per-round user messages (A.3): ```round_start`` (participants, CHEAP_TALK turn 0),
``contacted`` (our addition: the first turn of a non-participant activated by a message,
which needs the meeting and its own calendar before it can answer), ``turn`` (with
``turn_closing`` on the last turn of the budget), ``voluntary``, ``decision``, ``retry``,
and ``invalid_notice`` (prefixed to the next user message after a reply that could not be
parsed). Fields are ``$name`` (`string.Template`),
so JSON examples need no escaping.

Variants (A.2 "Adversarial variant injection", "DSPy variant injection"): Markdown blocks
appended after the base prompt, either built in (``variants/nosy-highpressure.md``,
``variants/redteam.md``) or any ``.md`` file named by path.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from confide.llm.prompts import PromptError, PromptFiles

PROMPT_VERSION = "1"
"""Bumped whenever a prompt text changes (recorded with every agent's system prompt)."""

SYSTEM_SECTIONS: tuple[str, ...] = (
    "system_rules",
    "system_constraints",
    "system_strategy",
    "system_slots",
    "system_tools",
    "system_phases",
    "system_format",
    "system_identity",
    "system_environment",
)
ADVERSARIAL_VARIANTS: tuple[str, ...] = ("nosy-highpressure", "redteam")

__all__ = [
    "ADVERSARIAL_VARIANTS",
    "PROMPT_VERSION",
    "SYSTEM_SECTIONS",
    "PromptError",
    "Variant",
    "load",
    "load_variant",
    "render",
]


FILES = PromptFiles(__name__)
VARIANT_FILES = PromptFiles(__name__, suffix=".md", folder="variants")


def load(name: str) -> str:
    """The text of prompt `name`."""
    return FILES.load(name)


def render(name: str, /, **values: object) -> str:
    """Prompt `name` with its ``$fields`` filled from `values`."""
    return FILES.render(name, **values)


@dataclass(frozen=True)
class Variant:
    """A Markdown block appended after the base system prompt: its name (a built-in name,
    or the path as given), where it was read from and the SHA-256 of its text, all of which
    go into the trace with the prompt."""

    name: str
    source: str
    text: str
    adversarial: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def load_variant(name: str) -> Variant:
    """A built-in variant (``nosy-highpressure``, ``redteam``) or a ``.md`` file path."""
    if name in ADVERSARIAL_VARIANTS:
        source = f"{__name__}/{VARIANT_FILES.path(name)}"
        return Variant(name, source, VARIANT_FILES.load(name), adversarial=True)
    if not name.endswith(".md"):
        raise PromptError(
            f"unknown CalBench prompt variant {name!r}: use one of "
            f"{', '.join(ADVERSARIAL_VARIANTS)} or the path of a Markdown (.md) file"
        )
    path = Path(name)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"prompt variant file {name}: cannot read it ({exc.strerror})") from None
    if not text.strip():
        raise PromptError(f"prompt variant file {name}: the file is empty")
    return Variant(name, str(path.resolve()), text.strip(), adversarial=False)
