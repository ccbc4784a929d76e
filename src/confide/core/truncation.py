"""Replies cut off by the token limit, counted per seat from a trace.

A reply a provider ended with `finish_reason` "length" is invalid output of its own kind:
the budget, not the model's format, is at fault, so every benchmark reports it per seat
next to its results (a reasoning model whose hidden reasoning eats the budget shows up
here instead of as a model that cannot write JSON)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from confide.core.trace import ModelCall


def truncated_replies(events: Iterable[object]) -> Counter[str]:
    """Per seat, how many of its model calls came back cut off at the token limit."""
    return Counter(
        event.seat
        for event in events
        if isinstance(event, ModelCall)
        and event.seat is not None
        and event.completion is not None
        and event.completion.get("finish_reason") == "length"
    )
