"""Commands that serve one benchmark check the runs they are given before reading them.

`confide leaderboard` rates CalBench seats and `confide judge agree` compares Sotopia-ToM
judges; given another benchmark's run they would fail on a missing column, or worse read a
column of the same name with another meaning. Each run directory names its benchmark in
`experiment.yaml` (written by `confide run`), so the mismatch is reported up front, naming
the command, the benchmark it serves and the run's benchmark.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from confide.errors import ConfideError


def run_benchmark(run_dir: Path) -> str | None:
    """The benchmark id a run directory was made for; None when it records none (a
    results.csv assembled by hand)."""
    from confide.runner.rundir import MARKER  # here: `confide --help` imports no runner
    from confide.untrusted import load_yaml

    marker = run_dir / MARKER
    if not marker.is_file():
        return None
    data = load_yaml(marker, "experiment file")
    value = data.get("benchmark") if isinstance(data, dict) else None
    return str(value) if value is not None else None


def require_benchmark(command: str, benchmark_id: str, run_dirs: Iterable[Path]) -> None:
    """Raise one error naming every run of another benchmark than `benchmark_id`."""
    wrong = [
        f"{run_dir} is a run of {found}"
        for run_dir in run_dirs
        if (found := run_benchmark(run_dir)) is not None and found != benchmark_id
    ]
    if wrong:
        raise ConfideError(
            f"`confide {command}` serves {benchmark_id} runs only; " + "; ".join(wrong)
        )
