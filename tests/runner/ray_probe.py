"""What the Ray tests' workers import (`ray_session` puts this directory on their path and
runs `setup` in each): `mock/gauge`, an echo model whose calls a named `Gauge` actor
counts while they run, so a test can read the most calls ever in flight at once across
every worker of the cluster; and `mock/fatal`, which kills its worker."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence
from typing import Any

import ray

from confide.llm import ChatMessage, Completion, GenerateConfig, MockModel, register_mock
from confide.llm.providers.mock_registry import echo_reply

GAUGE = "confide-test-gauge"


class Gauge:
    """Calls in flight now and at most (run as a named Ray actor)."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    def enter(self) -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)

    def exit(self) -> None:
        self.now -= 1

    def read(self) -> tuple[int, int]:
        return self.now, self.peak


def start_gauge() -> Any:
    """A fresh gauge actor under the shared name."""
    return ray.remote(num_cpus=0)(Gauge).options(name=GAUGE).remote()


class GaugedModel:
    """`mock/gauge`: echo replies after `latency_s`, counted by the gauge meanwhile."""

    def __init__(self, latency_s: float = 0.05, **_: Any) -> None:
        self.name = "mock/gauge"
        self.latency_s = latency_s
        self.inner = MockModel(echo_reply, name="gauge")

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        gauge = ray.get_actor(GAUGE)
        await gauge.enter.remote()
        try:
            await asyncio.sleep(self.latency_s)
            return await self.inner.generate(messages, config=config)
        finally:
            await gauge.exit.remote()


class FatalModel:
    """`mock/fatal`: its first call SIGKILLs the process it runs in (a worker lost
    mid-episode, every time)."""

    def __init__(self, **_: Any) -> None:
        self.name = "mock/fatal"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


def setup() -> None:
    """Run in every worker process of the test session (and in a driver whose preflight
    builds these models)."""
    register_mock("gauge", GaugedModel, replace=True)
    register_mock("fatal", FatalModel, replace=True)
