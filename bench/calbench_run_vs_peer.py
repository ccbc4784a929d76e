"""Whole `confide run` processes against the published engine's plain loop.

Per reference protocol P, this runs `confide run calbench --tasks <the public fixtures>
--lineup P --condition dm --out <tmp>` as a process, exactly as a user types it (start-up,
task loading, preflight, games, scoring, traces, every table and the report), and plays
the same games with the published engine (the unmodified harness under
../shared/anchors/calbench/peer/, `peer_game.play(task, protocol, max_turns)`) in a plain
loop in this process, with each task's own turn limit. The two sides alternate per
protocol, so a slow spell on the shared machine hits both. `confide run` runs twice per
protocol with its own oracle disk cache (`CONFIDE_ORACLE_CACHE`, envs/calbench/solvecache.py):
first empty (cold: the run solves every oracle problem itself, as on a first run), then
again with what the first run stored (warm: a user's rerun of the same tasks). Printed per
protocol: each side's seconds per game, wall clock and CPU (for `confide run`: the child's
user + system time), and the ratio published / confide of each. The last line is the CPU
ratio per protocol, cold and warm (the wall ratio swings with the neighbours' load). The
`confide` processes run with compiled bytecode, as an installed package does (a private
`PYTHONPYCACHEPREFIX` filled by one untimed warm-up run, even where the environment sets
PYTHONDONTWRITEBYTECODE), so they do not pay for compiling confide's sources. Skips
cleanly when ../shared is absent.

    PYTHONPATH=src python bench/calbench_run_vs_peer.py [--limit N]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confide.envs.calbench.env import game_limits, load_tasks
from confide.envs.calbench.options import EnvOptions

PEER_NAMES = {
    "imap": "imap", "sdmap": "sd", "dsm-welfare": "paper_dsm_welfare",
    "dsm-private": "private_dsm",
}
"""Our protocol name -> the published harness's (peer_game.py)."""


def anchors() -> Path:
    """CONFIDE_SHARED, else the `shared` folder next to the repository (as the tests)."""
    default = Path(__file__).resolve().parents[1].parent / "shared"
    return Path(os.environ.get("CONFIDE_SHARED") or default) / "anchors/calbench"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def confide_run(tasks: Path, protocol: str, out: Path, cache: Path,
                *extra: str) -> tuple[float, float]:
    """Wall and CPU seconds of one `confide run` process (module docstring) with the oracle
    disk cache in `cache` and bytecode kept in `out`'s parent."""
    shutil.rmtree(out, ignore_errors=True)
    command = [
        sys.executable, "-m", "confide", "run", "calbench", "--tasks", str(tasks),
        "--lineup", protocol, "--condition", "dm", "--out", str(out), "--no-progress", *extra,
    ]
    env = {**os.environ, "CONFIDE_ORACLE_CACHE": str(cache),
           "PYTHONPYCACHEPREFIX": str(out.parent / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"confide run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, children_cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N tasks only")
    args = parser.parse_args()
    files = sorted((anchors() / "tasks").glob("*.jsonl"))
    if not files or not (anchors() / "peer" / "peer_game.py").exists():
        print(f"skipped: no fixtures or published engine under {anchors()}")
        return 0
    sys.path.insert(0, str(anchors() / "peer"))
    peer = importlib.import_module("peer_game")
    lines = [line for f in files for line in f.read_text().splitlines() if line][: args.limit]
    raw = [json.loads(line) for line in lines]
    with tempfile.TemporaryDirectory() as tmp:
        tasks = Path(tmp) / "fixtures.jsonl"
        tasks.write_text("\n".join(lines) + "\n")
        turns = [
            game_limits(EnvOptions(), t).max_turns_per_round
            for t in load_tasks(None, str(tasks))
        ]
        games = len(raw)
        warm_up = Path(tmp) / "warm-up"
        confide_run(tasks, "imap", warm_up, warm_up / "oracle", "--limit", "1")  # bytecode
        print(f"{games} fixture tasks, DM condition, one `confide run` process per protocol")
        print(f"{'protocol':<12} {'cache':<5} {'published wall/cpu':>19} "
              f"{'confide run wall/cpu':>21} {'wall ratio':>10} {'cpu ratio':>9}")
        ratios: dict[str, list[float]] = {"cold": [], "warm": []}
        for protocol, peer_name in PEER_NAMES.items():
            cpu, start = time.process_time(), time.perf_counter()
            for fixture, max_turns in zip(raw, turns, strict=True):
                peer.play(fixture, peer_name, max_turns)
            peer_wall = time.perf_counter() - start
            peer_cpu = time.process_time() - cpu
            cache = Path(tmp) / f"oracle-{protocol}"
            for state in ("cold", "warm"):
                wall, run_cpu = confide_run(tasks, protocol, Path(tmp) / protocol, cache)
                ratios[state].append(peer_cpu / run_cpu)
                per_game = [1000 * x / games for x in (peer_wall, peer_cpu, wall, run_cpu)]
                print(f"{protocol:<12} {state:<5} {per_game[0]:>7.1f} / {per_game[1]:>5.1f} ms"
                      f" {per_game[2]:>9.1f} / {per_game[3]:>5.1f} ms"
                      f" {peer_wall / wall:>9.2f}x {ratios[state][-1]:>8.2f}x")
    print("cpu ratio, cold | warm: " + " ".join(
        f"{p} {c:.2f}x | {w:.2f}x"
        for p, c, w in zip(PEER_NAMES, ratios["cold"], ratios["warm"], strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
