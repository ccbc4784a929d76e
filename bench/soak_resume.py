"""Soak test of resume: SIGKILL the README main job at random moments, resume
each time, and check the end state against an uninterrupted run made here first.

Run by hand (not in CI); it takes about three times the main job's wall time:

    python bench/soak_resume.py [--kills 10] [--seed 0] [--workdir DIR] [--baseline RUN_DIR]
                                [-- RUN ARGS]

The kill moments are random: all but the last two are drawn as random numbers of complete
episodes (uniform over the run, sorted), each kill landing a random 0-1 s after that many
episodes are done, so in-flight episodes are cut; the last two land at a random moment
after every episode is complete, in the final phase that reads the traces back and writes
the outputs (uniformly within `--final-phase-s`, by default the uninterrupted run's own
final phase: a resumed run's is at least as long, so the kill lands in it). At the end:
every planned episode has exactly one complete trace and no other trace exists;
results.csv, summary.csv and every benchmark table are byte-identical to the
uninterrupted run; every trace's footer (rows, metrics, final state) equals the
baseline's; and no `.partial`, temporary, lock or 0-byte file is left anywhere.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confide.atomic import TEMP_SUFFIX
from confide.core.trace import read_trace
from confide.runner.rundir import LOCK_FILE

MAIN_JOB = ["calbench"]


def confide(args: list[str], out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "confide", "run", *args, "--out", str(out), "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def traces(run_dir: Path) -> dict[str, Path]:
    """Episode id -> complete trace file (any trace suffix; `.partial` excluded)."""
    found: dict[str, Path] = {}
    for path in (run_dir / "traces").iterdir():
        if path.name.endswith(".partial") or path.name.startswith("."):
            continue
        episode = path.name.split(".jsonl", 1)[0]
        assert episode not in found, f"two traces for {episode}"
        found[episode] = path
    return found


def count(run_dir: Path) -> int:
    return len(traces(run_dir)) if (run_dir / "traces").is_dir() else 0


def final_phase(proc: subprocess.Popen[bytes], run_dir: Path) -> float:
    """Wait for `proc` to exit; the seconds it ran after its last trace was complete (the
    final phase, where it writes the derived outputs)."""
    seen, last = -1, time.monotonic()
    while proc.poll() is None:
        now = count(run_dir)
        if now != seen:
            seen, last = now, time.monotonic()
        time.sleep(0.05)
    return time.monotonic() - last


def outputs(run_dir: Path) -> dict[str, bytes]:
    """Every derived table (top-level CSV files, gzipped ones inflated), with the run
    directory's own path (some tables name trace files) replaced by a placeholder."""
    here = str(run_dir).encode()
    tables = sorted([*run_dir.glob("*.csv"), *run_dir.glob("*.csv.gz")])
    return {
        p.name: (gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes())
        .replace(here, b"<run>")
        for p in tables
    }


def leftovers(run_dir: Path) -> list[str]:
    bad = []
    for path in run_dir.rglob("*"):
        if path.is_file() and (
            path.name.endswith((".partial", TEMP_SUFFIX)) or path.name == LOCK_FILE
            or path.stat().st_size == 0
        ):
            bad.append(str(path.relative_to(run_dir)))
    return sorted(bad)


def say(text: str) -> None:
    print(text, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--final-phase-s", type=float, default=None,
                        help="final-phase kills land uniformly within this many seconds "
                        "(default: the uninterrupted run's own final phase, which a resumed "
                        "run's, rebuilding rows from traces, is at least as long as)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="an uninterrupted run directory of the same job to compare with")
    parser.add_argument("run_args", nargs="*", help="confide run arguments (default: calbench)")
    args = parser.parse_args()
    if args.baseline is not None and args.final_phase_s is None:
        parser.error("--baseline needs --final-phase-s (no uninterrupted run is timed here)")
    run_args = args.run_args or MAIN_JOB
    rng = random.Random(args.seed)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="confide-soak-"))
    soak_dir = work / "soak" / "run"
    baseline_dir = args.baseline or work / "baseline" / "run"
    say(f"soak: confide run {' '.join(run_args)}, {args.kills} kills, in {work}")

    if args.baseline is None:
        started = time.monotonic()
        baseline = confide(run_args, baseline_dir)
        phase = final_phase(baseline, baseline_dir)
        assert baseline.stderr is not None
        assert baseline.returncode == 0, baseline.stderr.read().decode()[-2000:]
        say(f"uninterrupted run: {time.monotonic() - started:.1f} s, final phase {phase:.1f} s")
        args.final_phase_s = args.final_phase_s or phase
    want = traces(baseline_dir)
    total = len(want)
    assert not leftovers(baseline_dir), leftovers(baseline_dir)
    say(f"baseline {baseline_dir}: {total} episodes")
    targets = sorted(rng.randrange(1, total) for _ in range(max(args.kills - 2, 0)))

    problems: list[str] = []
    soak_started = time.monotonic()
    for kill in range(1, args.kills + 1):
        target = targets[kill - 1] if kill <= len(targets) else total
        proc = confide(run_args, soak_dir)
        started = time.monotonic()
        while proc.poll() is None and count(soak_dir) < target:
            time.sleep(0.05)
        delay = rng.uniform(0, 1) if target < total else rng.uniform(0, args.final_phase_s)
        try:
            proc.wait(timeout=delay)
            outcome = f"finished first (rc {proc.returncode})"
            if proc.returncode != 0:
                problems.append(f"attempt {kill} exited with {proc.returncode}")
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            outcome = "killed"
        say(f"attempt {kill:2d}: {time.monotonic() - started:6.1f} s, target "
            f"{target} episodes: {outcome}; {count(soak_dir)}/{total} complete")
    final_started = time.monotonic()
    final = confide(run_args, soak_dir)
    _, err = final.communicate()
    assert final.returncode == 0, err.decode()[-2000:]
    say(f"final resume: {time.monotonic() - final_started:.1f} s; whole soak "
          f"{time.monotonic() - soak_started:.1f} s")

    expected = set(want)
    got = traces(soak_dir)
    if set(got) != expected:
        problems.append(f"episodes: {len(set(got) - expected)} extra, "
                        f"{len(expected - set(got))} missing")
    for episode in sorted(expected & set(got)):
        a, b = read_trace(got[episode]).footer, read_trace(want[episode]).footer
        if a is None or b is None or a.model_dump(exclude={"ts"}) != b.model_dump(exclude={"ts"}):
            problems.append(f"trace {episode}: footer differs from the uninterrupted run")
    ours, theirs = outputs(soak_dir), outputs(baseline_dir)
    if ours.keys() != theirs.keys():
        problems.append(f"tables: {sorted(ours.keys() ^ theirs.keys())} in only one run")
    problems += [f"{name} differs from the uninterrupted run"
                 for name in sorted(ours.keys() & theirs.keys()) if ours[name] != theirs[name]]
    problems += [f"left behind: {name}" for name in leftovers(soak_dir)]
    say(f"checked: {len(got)} traces (one per episode), {len(ours)} tables byte-compared")
    for problem in problems[:20]:
        say(f"FAIL {problem}")
    say("soak: OK" if not problems else f"soak: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
