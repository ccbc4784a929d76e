"""A run directory belongs to one experiment: the default layout keeps
every run, `latest` points at the newest, a run into another experiment's directory is
refused before anything is touched, and commands given `runs/<benchmark>` read its latest
run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from confide.cli.main import main
from confide.errors import ConfideError
from confide.runner import build_experiment, run_experiment
from confide.runner.rundir import find_run


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def _cli(args: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("sys.argv", ["confide", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0)


def test_two_runs_in_one_folder_keep_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's sequence: imap then sdmap with default paths; the imap run's files are
    byte-identical afterwards and `latest` names the sdmap run."""
    monkeypatch.chdir(tmp_path)
    base = ["run", "calbench", "--suite", "tiny", "--condition", "dm", "--no-progress"]
    assert _cli([*base, "--lineup", "imap"], monkeypatch) == 0
    (first,) = (tmp_path / "runs" / "calbench").glob("tiny_imap_dm_*")
    before = _snapshot(first)
    assert (tmp_path / "runs/calbench/latest").resolve() == first.resolve()
    assert _cli([*base, "--lineup", "sdmap"], monkeypatch) == 0
    (second,) = (tmp_path / "runs" / "calbench").glob("tiny_sdmap_dm_*")
    assert _snapshot(first) == before
    assert (tmp_path / "runs/calbench/latest").resolve() == second.resolve()
    assert os.readlink(tmp_path / "runs/calbench/latest") == second.name  # relative link
    assert find_run(Path("runs/calbench")) == second.resolve()
    # the same command again resumes its own directory, nothing replayed (a resume
    # writes run.json anew: its start time)
    assert _cli([*base, "--lineup", "imap"], monkeypatch) == 0
    assert "6 resumed" in capsys.readouterr().out
    assert (first / "results.csv").read_bytes() == before["results.csv"]
    assert (tmp_path / "runs/calbench/latest").resolve() == first.resolve()
    assert sorted(p.name for p in (tmp_path / "runs/calbench").iterdir()) == sorted(
        ["latest", first.name, second.name])


def test_a_different_experiment_into_an_explicit_out_is_refused_untouched(
    tmp_path: Path,
) -> None:
    out = tmp_path / "X"
    fields = {"benchmark": "calbench", "suite": "tiny", "lineups": ["imap"],
              "conditions": ["dm"], "output_dir": str(out)}
    run_experiment(build_experiment(fields), show_progress=False)
    before = _snapshot(tmp_path)
    with pytest.raises(ConfideError) as refused:
        run_experiment(build_experiment({**fields, "lineups": ["sdmap"], "limit": 2}),
                       show_progress=False)
    message = str(refused.value)
    assert f"{out} holds a run of another experiment" in message
    assert '  lineups: ["imap"] vs. ["sdmap"]' in message
    assert "  limit: null vs. 2" in message
    assert "--out" in message and "--fresh" in message
    assert _snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X"]


def test_a_foreign_non_empty_directory_is_refused_even_with_fresh(tmp_path: Path) -> None:
    out = tmp_path / "home"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    exp = build_experiment({"benchmark": "demo", "output_dir": str(out)})
    for fresh in (False, True):
        with pytest.raises(ConfideError, match=r"holds no confide run .*thesis\.tex"):
            run_experiment(exp, show_progress=False, fresh=fresh)
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def test_run_settings_may_change_between_run_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fields = {"benchmark": "demo", "output_dir": str(out)}
    run_experiment(build_experiment(fields), show_progress=False)
    again = run_experiment(build_experiment({**fields, "concurrency": 1,
                                             "cache_dir": str(tmp_path / "cache")}),
                           show_progress=False)
    assert again.skipped == again.episodes == 3


README_RUNS = [
    ["calbench", "--suite", "tiny", "--lineup", "imap", "--condition", "dm"],
    ["calbench", "--suite", "tiny", "--lineup", "sdmap", "--condition", "dm"],
    ["sotopia-tom", "--lineup", "reference", "--limit", "1"],
    ["incognita", "--condition", "social", "--lineup", "reference", "--limit", "1"],
    ["incognita", "--lineup", "mock/incognita-skilled", "--lineup",
     "mock/incognita-ineffective", "--limit", "1"],
]
"""The offline `confide run` lines of docs/usage.md's command list (cut to one task where
they would play a whole suite), run top to bottom in one folder."""


def test_the_readme_sequence_keeps_every_earlier_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    kept: dict[Path, bytes] = {}
    for args in README_RUNS:
        assert _cli(["run", *args, "--no-progress"], monkeypatch) == 0
        latest = (tmp_path / "runs" / args[0] / "latest").resolve()
        assert latest not in kept  # a directory of its own
        for run, results in kept.items():
            assert (run / "results.csv").read_bytes() == results, run
        kept[latest] = (latest / "results.csv").read_bytes()
    assert len(kept) == len(README_RUNS)
