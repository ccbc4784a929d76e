"""Start-up time of the CLI: `confide --help` and `confide
benchmarks`, each as a fresh process, median wall time of `--runs` runs (target < 0.5 s),
next to the median of a bare `python -c pass` measured in the same run (the floor no CLI
can beat on this machine). The three commands take turns within each round, so a busy
spell on a shared machine hits all of them; each median is also printed as a multiple of
the bare interpreter's. The top-level group lists its commands from a static table and
imports a command's module only when that command runs (`confide.cli.lazy`), and
`benchmarks` reads the registry's catalog instead of importing environments.

    PYTHONPATH=src python bench/cli_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "confide --help": ["-m", "confide.cli.main", "--help"],
    "confide benchmarks": ["-m", "confide.cli.main", "benchmarks"],
}


def seconds(args: list[str]) -> float:
    """Wall seconds of one fresh process `python args...` (it must succeed)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            times[name].append(seconds(command))
    median = {name: statistics.median(t) for name, t in times.items()}
    bare = median["python -c pass"]
    for name, value in median.items():
        print(f"{name:<19} {value:.3f} s  {value / bare:5.1f}x python -c pass")
    print(f"median of {args.runs}: --help {median['confide --help']:.2f} s, benchmarks "
          f"{median['confide benchmarks']:.2f} s (target < 0.5 s each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
