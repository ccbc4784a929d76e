"""Ctrl-C and SIGTERM stop a run cleanly instead of killing it.

While a run is active (`StopSignals`, main thread only) SIGINT and SIGTERM call the run's
stop callbacks: no new episodes start, in-flight ones are cancelled (their partial traces
removed), and results are written for the finished ones; the CLI then exits with status
130. A second signal exits at once with status 130: finished traces are complete files
and a rerun resumes.

A handler only works while the process-wide disposition stays Python's. OR-Tools' CP-SAT,
by default, installs its own SIGINT handler for each solve and leaves SIG_DFL behind (so
Ctrl-C then killed a CalBench run outright, and a Ctrl-C during a solve ended the search
early, failing the episode); CalBench's solver therefore runs with
`catch_sigint_signal = False`, and a test checks that no benchmark's episode leaves
SIGINT or SIGTERM taken away from Python.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any, TextIO

SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODE = 130


class StopSignals:
    """Context manager routing SIGINT / SIGTERM to stop callbacks for the block. Inert
    outside the main thread (Python delivers signals only there)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.received = 0
        self._out = out if out is not None else sys.stderr
        self._callbacks: list[Callable[[], None]] = []
        self._saved: dict[int, Any] = {}

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the first signal; at once if one already arrived."""
        self._callbacks.append(callback)
        if self.received:
            callback()

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._saved = {s: signal.signal(s, self._handle) for s in SIGNALS}
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received += 1
        name = signal.Signals(signum).name
        if self.received > 1:
            self._say(f"{name} again: quitting now; finished episodes are kept.")
            os._exit(EXIT_CODE)
        self._say(
            f"{name}: starting no more episodes; stopping the ones in flight and writing "
            "results for the finished ones (interrupt again to quit at once)."
        )
        for callback in self._callbacks:
            callback()

    def _say(self, text: str) -> None:
        self._out.write(f"\nconfide: {text}\n")
        self._out.flush()
