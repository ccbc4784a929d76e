"""Engines for the local model's worker process in tests: a stand-in that needs no
llama.cpp, and the real engine behind a tripwire.

Both are given to the worker as `functools.partial(Engine, tripwire=<dir>)` (pickled by
reference; the worker shares the test process's `sys.path`). A test arms the tripwire
by creating `<dir>/armed`; the next call removes it, writes the worker's pid to
`<dir>/tripped` and then never returns on its own (the stand-in sleeps, the real engine
keeps decoding), so the test can kill the worker while the call is in flight.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confide.llm.providers.llama_engine import LlamaEngine
from confide.llm.types import GenerateConfig

REPLY_PREFIX = "stand-in heard: "


def arm(tripwire: Path) -> None:
    """Make the next call trip."""
    (tripwire / "armed").touch()


def wait_tripped(tripwire: Path, timeout_s: float = 60.0) -> int:
    """The pid of the worker whose call tripped, once it has."""
    deadline = time.monotonic() + timeout_s
    tripped = tripwire / "tripped"
    while not (tripped.exists() and tripped.read_text()):
        assert time.monotonic() < deadline, "no call tripped the wire"
        time.sleep(0.01)
    pid = int(tripped.read_text())
    tripped.unlink()
    return pid


def _trip(tripwire: Path) -> bool:
    armed = tripwire / "armed"
    if not armed.exists():
        return False
    armed.unlink()
    partial = tripwire / "tripped.partial"
    partial.write_text(str(os.getpid()))
    partial.rename(tripwire / "tripped")
    return True


class StandInEngine:
    """Echoes the last message. A call whose message is `crash:<how>` (or, with
    `crash_on_load=<how>`, the start) dies natively: `segv` (a null read), `abort`, or
    `exit` (status 3). A call whose message is `raise` raises; `fail_on_load` makes the
    start raise."""

    def __init__(
        self,
        *,
        tripwire: Path,
        crash_on_load: str | None = None,
        fail_on_load: bool = False,
        **settings: Any,
    ) -> None:
        self.tripwire = tripwire
        self.settings = settings
        if crash_on_load is not None:
            die(crash_on_load)
        if fail_on_load:
            raise ValueError("not a GGUF file")

    def complete(
        self, messages: Sequence[dict[str, Any]], config: GenerateConfig
    ) -> dict[str, Any]:
        if _trip(self.tripwire):
            time.sleep(600)
        last = str(messages[-1]["content"])
        if last.startswith("crash:"):
            die(last.removeprefix("crash:"))
        if last == "raise":
            raise RuntimeError("the stand-in refuses")
        text = REPLY_PREFIX + last.splitlines()[0]
        return {
            "choices": [
                {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": len(last.split()), "completion_tokens": len(text.split())},
            "pid": os.getpid(),
            "settings": self.settings,
        }

    def close(self) -> None:
        pass


def die(how: str) -> None:
    """End this process the native way `how` names."""
    if how == "segv":
        ctypes.string_at(0)
    elif how == "abort":
        os.abort()
    os._exit(3)


class TripwiredLlama(LlamaEngine):
    """The real llama.cpp engine; a tripped call decodes its request over and over."""

    def __init__(self, *, tripwire: Path, **settings: Any) -> None:
        super().__init__(**settings)
        self.tripwire = tripwire

    def complete(
        self, messages: Sequence[dict[str, Any]], config: GenerateConfig
    ) -> dict[str, Any]:
        if _trip(self.tripwire):
            while True:
                super().complete(messages, config)
        return super().complete(messages, config)
