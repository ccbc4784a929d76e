"""Seeding helpers: every random choice comes from a generator derived from named parts
(suite seed, task id, repetition, seat...). There is no global RNG anywhere in confide."""

from __future__ import annotations

import hashlib
import random

import numpy as np


def derive_seed(*parts: object) -> int:
    """A 63-bit seed that depends only on the printed form of `parts`, stable across
    processes and Python versions (unlike `hash`)."""
    digest = hashlib.sha256("\x1f".join(repr(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def py_rng(*parts: object) -> random.Random:
    """A `random.Random` seeded from `parts` (e.g. `py_rng(seed, task_id, rep, seat)`)."""
    return random.Random(derive_seed(*parts))


def np_rng(*parts: object) -> np.random.Generator:
    """A numpy Generator seeded from `parts`."""
    return np.random.default_rng(derive_seed(*parts))
