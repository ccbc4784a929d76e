"""`ProviderSlots`, the Ray backend's cluster-wide call slots, as a plain object: slots are
handed out first come first served up to the limit, a request withdrawn while it waits
never takes a slot, and a dead worker's slots come back."""

from __future__ import annotations

import asyncio

from confide.runner.ray_backend import ProviderSlots


async def test_limit_order_withdrawal_and_dead_holder() -> None:
    slots = ProviderSlots({"openai": 2, "mock": None})
    assert await slots.acquire("mock", "w0", "m1")  # unlimited: never counted
    assert await slots.acquire("openai", "w0", "a") and await slots.acquire("openai", "w1", "b")
    third = asyncio.ensure_future(slots.acquire("openai", "w1", "c"))
    fourth = asyncio.ensure_future(slots.acquire("openai", "w0", "d"))
    await asyncio.sleep(0)
    assert not third.done() and slots.held() == {"openai": 2}
    slots.release("c")  # withdrawn while waiting
    slots.release("a")
    assert await third is False  # handed the slot, gave it straight on to the next
    assert await fourth is True and slots.held() == {"openai": 2}
    fifth = asyncio.ensure_future(slots.acquire("openai", "w1", "e"))
    await asyncio.sleep(0)
    slots.release_holder("w0")  # w0 died holding "d"
    assert await fifth is True and slots.held() == {"openai": 2}
    slots.release("b")
    assert await slots.acquire("openai", "w0", "f") is False  # a dead worker gets nothing
    assert slots.held() == {"openai": 1}
    assert await slots.acquire("openai", "w1", "g") and slots.held() == {"openai": 2}
