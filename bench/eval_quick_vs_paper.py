"""Does the quick design track the paper design? For the reference participants (each
benchmark's `reference_lineup`), the quick design's headline numbers next to the paper
design's 95% bootstrap intervals, and whether each falls inside.

    PYTHONPATH=src python bench/eval_quick_vs_paper.py [--out DIR] [--model reference]

Both designs run offline for the reference participants (no model is called); the
paper design plays every task of every suite, so it takes minutes. A run directory that
is already there is resumed, so a second call only recomputes the profiles.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import confide.evaluate as ev
from confide.evaluate.render import fmt, interval, metric_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--model", default=ev.REFERENCE)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="eval-bench-"))
    seconds = {}
    profiles = {}
    for design in ("quick", "paper"):
        start = time.perf_counter()
        profiles[design] = ev.evaluate(args.model, design=design, out=out / design)
        seconds[design] = time.perf_counter() - start
    paper = {(m.benchmark, metric_name(m)): m for m in profiles["paper"].metrics()}
    inside = total = 0
    print(f"{args.model}: quick design vs paper design (95% bootstrap intervals over tasks)")
    print(f"{'benchmark':<12} {'metric':<36} {'quick':>10}  {'paper [95% CI]':<28} inside")
    for metric in profiles["quick"].metrics():
        other = paper.get((metric.benchmark, metric_name(metric)))
        if other is None:
            continue
        quick, est = metric.estimate.value, other.estimate
        verdict = "-"
        if quick is not None and est.lower is not None and est.upper is not None:
            total += 1
            hit = est.lower - 1e-9 <= quick <= est.upper + 1e-9
            inside += hit
            verdict = "yes" if hit else "NO"
        print(f"{metric.benchmark:<12} {metric_name(metric):<36} {fmt(quick):>10}  "
              f"{interval(est):<28} {verdict}")
    episodes = {d: sum(b.episodes for b in p.benchmarks) for d, p in profiles.items()}
    print(f"inside: {inside} of {total} headline numbers")
    print(f"episodes: quick {episodes['quick']}, paper {episodes['paper']} "
          f"(ratio {episodes['quick'] / max(episodes['paper'], 1):.3f}); wall seconds: quick "
          f"{seconds['quick']:.1f}, paper {seconds['paper']:.1f}")
    print(f"profiles: {out}")


if __name__ == "__main__":
    main()
