"""The one wording every environment uses to tell a participant that an action of its own
was refused and why: Sotopia-ToM when it re-asks after bad recipients,
CalBench in the next turn message after a refused cheap-talk action. The reason is the
environment's own; this only frames it, so every benchmark says it the same way."""

from __future__ import annotations


def refusal(reason: str, *, what: str = "message") -> str:
    """`Your <what> was refused: <reason>.`"""
    return f"Your {what} was refused: {reason.rstrip('.')}."
