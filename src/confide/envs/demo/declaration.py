"""What the shared layers show of the demo (`confide.declaration`): its catalog entry only
(it has no paper, so no metrics of its own to define). Imports nothing of the environment."""

from __future__ import annotations

from confide.declaration import Declaration

DECLARATION = Declaration(
    id="demo",
    spec="confide.envs.demo.spec:SPEC",
    description="Relay ring that exercises the runtime (no benchmark logic).",
    suites=("default",),
    participants=("scripted",),
)
