"""Observer beliefs about a target's calendar (the CalBench paper §F.1, F.4).

Bel^r_{j->i}[k] is observer j's belief, within round r, that slot k is usable by target i
(free or freeable). Every belief starts the round at the prior p0 (0.5 by default, F.4:
maximal uncertainty about an unfamiliar calendar) and moves only through the F.1 update

    Bel'[k] = (1 - alpha) Bel[k] + alpha e

with evidence e in [0, 1] and strength alpha in [0, 1]. Beliefs are kept per (round,
observer, target): a round's VPS counts what that round's messages revealed, and every
slot weighs the same (slot-equivalent units, F.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import sub

PRIOR = 0.5

BeliefKey = tuple[int, int, int]
"""(round, observer, target)."""


def nudge(belief: float, evidence: float, strength: float) -> float:
    """The F.1 update of one slot's belief (every game's VPS runs it per update: the
    range check names a culprit only when one fails)."""
    if not (0.0 <= belief <= 1.0 and 0.0 <= evidence <= 1.0 and 0.0 <= strength <= 1.0):
        for name, value in (("belief", belief), ("evidence", evidence), ("strength", strength)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"nudge: {name} must be in [0, 1], got {value}")
    return (1.0 - strength) * belief + strength * evidence


@dataclass
class BeliefTable:
    """Every (round, observer, target) belief vector of one game, created on first use."""

    num_slots: int
    prior: float = PRIOR
    _beliefs: dict[BeliefKey, list[float]] = field(default_factory=dict)
    _observations: dict[BeliefKey, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.num_slots < 1:
            raise ValueError(f"BeliefTable: num_slots must be >= 1, got {self.num_slots}")
        if not 0.0 <= self.prior <= 1.0:
            raise ValueError(f"BeliefTable: prior must be in [0, 1], got {self.prior}")

    def update(
        self, key: BeliefKey, slot: int, evidence: float, strength: float
    ) -> tuple[float, float]:
        """Apply one piece of evidence to slot `slot`; returns (belief before, after)."""
        if not 0 <= slot < self.num_slots:
            raise ValueError(f"BeliefTable: slot {slot} is outside [0, {self.num_slots})")
        vector = self._beliefs.get(key)
        if vector is None:
            vector = self._beliefs[key] = [self.prior] * self.num_slots
        before = vector[slot]
        vector[slot] = nudge(before, evidence, strength)
        self._observations[key] = self._observations.get(key, 0) + 1
        return before, vector[slot]

    def apply(
        self, key: BeliefKey, claims: Sequence[tuple[int, float, float, str]]
    ) -> list[tuple[float, float]]:
        """`update` with each (slot, evidence, strength, source) of `claims` in turn, the
        vector looked up once (a game's VPS applies every message's claims to each of its
        observers); returns each (belief before, after)."""
        vector = self._beliefs.get(key)
        if vector is None:
            vector = self._beliefs[key] = [self.prior] * self.num_slots
        moved = []
        for slot, evidence, strength, _ in claims:
            if not 0 <= slot < self.num_slots:
                raise ValueError(f"BeliefTable: slot {slot} is outside [0, {self.num_slots})")
            before = vector[slot]
            vector[slot] = after = nudge(before, evidence, strength)
            moved.append((before, after))
        self._observations[key] = self._observations.get(key, 0) + len(claims)
        return moved

    def posterior(self, key: BeliefKey) -> list[float]:
        """The belief vector at the end of the round (the prior when nothing was seen)."""
        return list(self._beliefs.get(key, [self.prior] * self.num_slots))

    def keys(self) -> list[BeliefKey]:
        """Every key that received evidence (the others are at the prior)."""
        return list(self._beliefs)

    def observations(self, key: BeliefKey) -> int:
        """How many updates `key` received."""
        return self._observations.get(key, 0)

    def distance_to_prior(self, key: BeliefKey) -> float:
        """sum_k |Bel[k] - p0|: the section 3.2 VPS of one (round, observer, target)."""
        vector = self._beliefs.get(key)
        if vector is None:
            return 0.0
        total: float = sum(map(abs, map(sub, vector, repeat(self.prior))))  # slot order
        return total
