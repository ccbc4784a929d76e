"""Peak memory of a CalBench reference run as the episode count grows (issues 12.11, 15.5).

Runs `confide run calbench --lineup imap --condition dm --repetitions R` on the canonical
suite (90 tasks, so R = 11 gives 990 episodes and R = 111 gives 9,990) as child processes
of this one, each into a fresh temporary directory, and reads each child's peak resident
set size from the kernel (`wait4`). A run keeps only per-episode result rows in memory
and reads traces back one at a time for its tables, so the larger run should peak within
10% of the smaller one and at most 400 MB. Prints both peaks, the run directories' sizes,
and, last, the ratio of the peaks.

    PYTHONPATH=src python bench/run_memory.py [--small 11] [--large 111]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def peak_rss_mb(repetitions: int, out: Path) -> float:
    """Peak RSS in MB of one `confide run` child process (it must succeed)."""
    cmd = [
        sys.executable, "-m", "confide.cli.main", "run", "calbench", "--lineup", "imap",
        "--condition", "dm", "--repetitions", str(repetitions), "--out", str(out),
        "--no-progress",
    ]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited with {child.returncode}")
    return usage.ru_maxrss / 1024  # kilobytes on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=11, help="repetitions of the small run")
    parser.add_argument("--large", type=int, default=111, help="repetitions of the large run")
    args = parser.parse_args()
    peaks = []
    with tempfile.TemporaryDirectory() as tmp:
        for repetitions in (args.small, args.large):
            out = Path(tmp) / f"r{repetitions}"
            peaks.append(peak_rss_mb(repetitions, out))
            episodes = len(list((out / "traces").iterdir()))
            size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
            print(f"{episodes:>6} episodes: peak RSS {peaks[-1]:6.1f} MB, "
                  f"run directory {size / 1e6:6.1f} MB")
    print(f"peak RSS large/small: {peaks[1] / peaks[0]:.3f}x "
          f"(large {peaks[1]:.0f} MB; targets <= 1.10x and <= 400 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
