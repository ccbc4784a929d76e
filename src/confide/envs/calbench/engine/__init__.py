"""The CalBench game engine: rounds, phases, routing, batches and resolution (A.3-A.5)."""

from confide.envs.calbench.engine.game import (
    DEFAULT_DECISION_RETRIES,
    DEFAULT_MAX_TURNS,
    Game,
    GameConfig,
)
from confide.envs.calbench.engine.outcome import GameOutcome, consistent_slot

__all__ = [
    "DEFAULT_DECISION_RETRIES",
    "DEFAULT_MAX_TURNS",
    "Game",
    "GameConfig",
    "GameOutcome",
    "consistent_slot",
]
