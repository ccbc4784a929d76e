"""Derived outputs are replaced atomically: a write that fails half-way
(a full disk, a kill) leaves the previous file whole and no temporary behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from confide import atomic
from confide.runner import build_experiment, run_experiment

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _files(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes()
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


FULL_DISK = textwrap.dedent("""
    import resource, signal, sys
    from confide.cli.main import main
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    sys.argv = ["confide", *sys.argv[2:]]
    main()
""")


def test_a_full_disk_leaves_every_previous_output_whole(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["run", "demo", "--out", str(run_dir), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": SRC}
    first = subprocess.run([sys.executable, "-m", "confide", *args], env=env,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    before = _files(run_dir)
    limit = 512  # experiment.yaml fits; results.csv and report.html do not
    assert len(before["experiment.yaml"]) < limit < len(before["results.csv"])
    full = subprocess.run([sys.executable, "-c", FULL_DISK, str(limit), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert full.returncode != 0
    assert "File too large" in full.stderr
    assert _files(run_dir) == before  # nothing cut mid-row, no temporary left


@pytest.mark.parametrize(
    ("benchmark", "fields"),
    [
        ("calbench", {"suite": "tiny", "lineups": ["imap"], "conditions": ["dm"]}),
        ("sotopia-tom", {}),
        ("incognita", {"conditions": ["social"]}),
        ("demo", {}),
    ],
)
def test_every_output_file_is_written_through_the_atomic_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, benchmark: str, fields: dict[str, Any]
) -> None:
    """The whole class: every file a run writes outside its traces goes through
    `confide.atomic` (traces have their own partial-then-rename writer)."""
    written: set[Path] = set()
    create = atomic._create_temporary

    def recording(target: Path) -> tuple[int, Path]:
        written.add(target)
        return create(target)

    monkeypatch.setattr(atomic, "_create_temporary", recording)
    run_dir = tmp_path / "run"
    exp = build_experiment({"benchmark": benchmark, "limit": 1, **fields,
                            "output_dir": str(run_dir)})
    summary = run_experiment(exp, show_progress=False)
    assert summary.finished == summary.episodes and not summary.failed
    outputs = {p for p in run_dir.rglob("*") if p.is_file() and p.parent.name != "traces"}
    assert {"results.csv", "report.html", "experiment.yaml"} <= {p.name for p in outputs}
    assert outputs - written == set()


def test_a_failed_write_keeps_the_old_file_and_a_symlink_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic.atomic_text(target) as handle:
        handle.write("half")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]
    victim = tmp_path / "victim"
    victim.write_text("precious")
    link = tmp_path / "link.csv"
    link.symlink_to(victim)
    atomic.write_text(link, "new")
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and link.read_text() == "new"
