"""A rich progress bar for runs: episodes done / failed, tokens and cost so far."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RunProgress:
    """Context manager around rich's Progress; silent when `enabled` is False."""

    def __init__(self, total: int, already_done: int, meter: Any, enabled: bool) -> None:
        self._meter = meter
        self._failed = 0
        self._progress = Progress(
            TextColumn("[bold]episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            disable=not enabled,
        )
        self._task = self._progress.add_task("run", total=total, completed=already_done,
                                             stats=self._stats())

    def _stats(self) -> str:
        usage = self._meter.snapshot()
        cost = usage.get("cost_usd")
        shown = "unknown" if cost is None else f"${cost:.4f}"
        tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        return f"failed {self._failed}  tokens {tokens}  cost {shown}"

    def advance(self, ok: bool) -> None:
        if not ok:
            self._failed += 1
        self._progress.update(self._task, advance=1, stats=self._stats())

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()
