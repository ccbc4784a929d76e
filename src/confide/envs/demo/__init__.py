"""`demo`: a tiny relay game that exercises the whole runtime (postbox, participants,
model calls, traces, runner) without any benchmark logic.

Seats sit in a ring. For `rounds` rounds each seat in turn observes what was delivered to
it since its last turn and sends one direct message to the next seat. The reference
participant `scripted` writes a deterministic summary; a model seat asks its chat model.
Metrics count messages and invalid (empty) model replies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from confide.core.benchmark import BenchmarkSpec


def __getattr__(name: str) -> BenchmarkSpec:
    """`SPEC` from `spec.py`, imported on first use: the package stays light, so the
    registry reads `declaration.py` without importing the environment."""
    if name != "SPEC":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from confide.envs.demo.spec import SPEC

    return SPEC
