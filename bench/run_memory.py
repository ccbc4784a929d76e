"""Peak memory of a CalBench reference run as the episode count grows (15.5).

Runs `confide run calbench --lineup imap --condition dm --repetitions R` on the canonical
suite (90 tasks, so R = 11 gives 990 episodes and R = 111 gives 9,990) as child processes
of this one, each into a fresh temporary directory, and reads each child's peak resident
set size from the kernel (`wait4`). The child also reports its peak so far (VmHWM) when
the episodes are played and the output phase begins, so the two phases' peaks are told
apart. A run keeps only each episode's status in memory and reads traces back one at a
time for its tables, so the larger run should peak within 10% of the smaller one and at
most 400 MB. Prints both peaks, the run directories' sizes, and, last, the ratio of the
peaks. Linux only (VmHWM, wait4's ru_maxrss in kilobytes).

    PYTHONPATH=src python bench/run_memory.py [--small 11] [--large 111] [--runs 1] [--parallel]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import sys
from pathlib import Path
import confide.runner.execute as execute
from confide.cli.main import main

outputs, marker = execute.write_run_outputs, Path(sys.argv.pop(1))

def hwm_kb():
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))

def timed_outputs(*args, **kwargs):
    marker.write_text(str(hwm_kb()))
    return outputs(*args, **kwargs)

execute.write_run_outputs = timed_outputs
sys.argv[0] = "confide"
main()
"""


def start(repetitions: int, out: Path) -> tuple[subprocess.Popen[bytes], float]:
    """Start one `confide run` child process into `out` (and the time it started)."""
    cmd = [
        sys.executable, "-c", CHILD, str(out.with_suffix(".played")), "run", "calbench",
        "--lineup", "imap", "--condition", "dm", "--repetitions", str(repetitions),
        "--out", str(out), "--no-progress",
    ]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL), time.perf_counter()


def finish(child: subprocess.Popen[bytes], started: float, out: Path) -> tuple[float, float, float]:
    """(peak RSS in MB of the child, its peak when the output phase began, wall seconds);
    the run must have succeeded."""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, child.args))} exited with {child.returncode}")
    played = int(out.with_suffix(".played").read_text()) / 1024
    return usage.ru_maxrss / 1024, played, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=11, help="repetitions of the small run")
    parser.add_argument("--large", type=int, default=111, help="repetitions of the large run")
    parser.add_argument("--runs", type=int, default=1, help="runs of each size (max peak)")
    parser.add_argument("--parallel", action="store_true",
                        help="start every run at once (peaks are per process)")
    args = parser.parse_args()
    peaks: dict[int, float] = {}
    sizes = [r for r in (args.small, args.large) for _ in range(args.runs)]
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"r{r}-{i}" for i, r in enumerate(sizes)]
        children = [start(r, out) for r, out in zip(sizes, outs, strict=True)] \
            if args.parallel else []
        for i, (repetitions, out) in enumerate(zip(sizes, outs, strict=True)):
            child, started = children[i] if args.parallel else start(repetitions, out)
            peak, played, seconds = finish(child, started, out)
            peaks[repetitions] = max(peaks.get(repetitions, 0.0), peak)
            episodes = len(list((out / "traces").iterdir()))
            size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
            print(f"{episodes:>6} episodes: peak RSS {peak:6.1f} MB (playing {played:6.1f} "
                  f"MB), run directory {size / 1e6:6.1f} MB, {seconds:.0f} s", flush=True)
    small, large = peaks[args.small], peaks[args.large]
    print(f"peak RSS large/small: {large / small:.3f}x "
          f"(large {large:.0f} MB; targets <= 1.10x and <= 400 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
