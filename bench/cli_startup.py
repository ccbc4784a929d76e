"""Start-up time of the CLI (issue 15, target 6): `confide --help` and `confide
benchmarks`, each as a fresh process, median wall time of `--runs` runs (target < 0.5 s),
next to the median of a bare `python -c pass` measured in the same run (the floor no CLI
can beat on this machine). The CLI imports each command's layers only when the command
runs, and `benchmarks` reads the registry's catalog instead of importing environments.

    PYTHONPATH=src python bench/cli_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def median_seconds(args: list[str], runs: int) -> float:
    """Median wall seconds of `runs` fresh processes `python args...` (each must succeed)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    bare = median_seconds(["-c", "pass"], args.runs)
    cli = ["-m", "confide.cli.main"]
    help_s = median_seconds([*cli, "--help"], args.runs)
    list_s = median_seconds([*cli, "benchmarks"], args.runs)
    print(f"python -c pass      {bare:.3f} s")
    print(f"confide --help      {help_s:.3f} s")
    print(f"confide benchmarks  {list_s:.3f} s")
    print(f"median of {args.runs}: --help {help_s:.2f} s, benchmarks {list_s:.2f} s "
          "(target < 0.5 s each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
