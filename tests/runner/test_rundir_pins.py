"""The run directory pinned from mutation-testing survivors (bench/mutation.py): a
directory holds one experiment (the same command finds its own, another configuration
is refused naming what differs), one run holds it at a time, a killed run's leftovers
are cleared, and reading commands name a bad file instead of hanging on it."""

from __future__ import annotations

import errno
import fcntl
import gzip
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from confide.atomic import TEMP_SUFFIX
from confide.runner import rundir
from confide.runner.config import Experiment
from confide.runner.rundir import (
    LOCK_FILE,
    MARKER,
    RunDirError,
    RunLockError,
    check_not_foreign,
    check_same_experiment,
    default_run_dir,
    find_run,
    point_latest,
    prepare,
    readable_run,
    run_dir_of,
    run_lock,
    set_aside,
)


def _exp(**fields: object) -> Experiment:
    return Experiment.model_validate({"benchmark": "demo", "lineups": ["mock/echo"], **fields})


# --- the default run directory: one name per experiment -----------------------------


def test_the_default_name_reads_the_tasks_lineups_and_conditions() -> None:
    path = default_run_dir(
        _exp(
            tasks="/data/my tasks.v2.jsonl", lineups=["mock/a", "mock/b"], conditions=["dm", "x y"]
        )
    )
    assert path.parent == Path("runs") / "demo"
    readable, digest = path.name.rsplit("_", 1)
    assert readable == "my-tasks.v2_mock-a+mock-b_dm+x-y"
    assert len(digest) == 8 and int(digest, 16) >= 0
    assert default_run_dir(_exp(suite="tiny")).name.startswith("tiny_mock-echo_")
    assert default_run_dir(_exp()).name.startswith("tasks_mock-echo_")  # neither given


def test_the_readable_part_is_trimmed_and_cut_at_80() -> None:
    name = default_run_dir(_exp(suite="..odd/", lineups=["-x-"])).name
    assert name.rsplit("_", 1)[0] == "odd_x"
    long = default_run_dir(_exp(suite="s" * 200)).name
    assert long.rsplit("_", 1)[0] == "s" * 80


def test_the_name_changes_with_the_experiment_and_not_with_run_settings() -> None:
    base = default_run_dir(_exp())
    assert default_run_dir(_exp(seed=1)) != base
    assert default_run_dir(_exp(options={"rounds": 2})) != base
    assert default_run_dir(_exp(model_options={"temperature": 0.5})) != base
    same = _exp(
        concurrency=1,
        cache_dir="/c",
        output_dir="/o",
        price_table="/p",
        workers=2,
        model_options={"api_key": "sk-never-a-difference"},
    )
    assert default_run_dir(same) == base
    nested = _exp(model_options={"judge": {"api_key": "k1"}})
    assert default_run_dir(nested) == default_run_dir(
        _exp(model_options={"judge": {"api_key": "k2"}})
    )


def test_output_dir_wins_over_the_default(tmp_path: Path) -> None:
    assert run_dir_of(_exp(output_dir=str(tmp_path / "o"))) == tmp_path / "o"
    assert run_dir_of(_exp()) == default_run_dir(_exp())


# --- which run a command reads -----------------------------------------------------


def _run(path: Path, *, results: bool = True) -> Path:
    path.mkdir(parents=True)
    (path / MARKER).write_text("benchmark: demo\n")
    if results:
        (path / "results.csv").write_text("episode_id,status\ne,ok\n")
    return path


def test_a_folder_of_runs_reads_its_latest_and_a_run_reads_itself(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "demo"
    one = _run(folder / "one")
    _run(folder / "two")
    point_latest(one)
    assert find_run(folder) == one.resolve()
    point_latest(folder / "two")
    assert os.readlink(folder / "latest") == "two"
    assert find_run(folder) == (folder / "two").resolve()
    assert find_run(folder / "latest") == (folder / "two").resolve()
    assert find_run(one) == one
    assert not [p for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX)]
    # a run holding its own `latest` link is read itself
    (one / "latest").symlink_to(folder / "two")
    assert find_run(one) == one
    # a dangling `latest`: the folder itself (which then is no run)
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "latest").symlink_to(tmp_path / "gone")
    assert find_run(lonely) == lonely


def test_a_latest_that_is_no_link_is_left_alone_and_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    run = _run(folder / "r")
    _run(folder / "latest")  # a user's own run called latest
    point_latest(run)
    assert find_run(folder) == folder
    assert not (folder / "latest").is_symlink()
    assert (folder / "latest" / MARKER).is_file()
    assert sorted(p.name for p in folder.iterdir()) == ["latest", "r"]


def test_reading_a_path_that_is_no_run_names_why(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match=r"missing is not a run directory$"):
        readable_run(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RunDirError, match=r"empty is not a run directory \(no results\.csv\)"):
        readable_run(empty)


def test_only_the_files_a_reader_reads_are_checked(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    os.mkfifo(run / "notes.fifo")  # not a table: never opened (a FIFO would block)
    (run / "inside.json").write_text("{}")
    (run / "link.json").symlink_to(run / "inside.json")  # a link inside the run is fine
    (run / "data.csv.gz").write_bytes(gzip.compress("é,ok\n".encode()))
    assert readable_run(run) == run


def test_a_bad_experiment_file_is_named(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    (run / MARKER).write_text("a: [\n")
    with pytest.raises(Exception, match=r"experiment\.yaml"):
        readable_run(run)


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("bad.csv.gz", b"not gzip at all", "Not a gzipped file (b'no')"),
        (
            "cut.csv.gz",
            gzip.compress(b"ok")[:-4],
            "Compressed file ended before the end-of-stream marker was reached",
        ),
        ("bad.csv.gz", gzip.compress(b"ok\n\xff"), "not UTF-8 text (byte 0xff at offset 3)"),
        ("cut.csv", "ok é".encode()[:-1], "not UTF-8 text (it ends inside a character)"),
        (
            "late.csv",
            b"a" * (1 << 20) + b"bc\xfe",
            f"not UTF-8 text (byte 0xfe at offset {(1 << 20) + 2})",
        ),
        # a character split by the chunk boundary is read whole, and a bad byte after it
        # is placed counting the held bytes once
        (
            "split.csv",
            b"a" * ((1 << 20) - 1) + "é".encode() + b"\xff",
            f"not UTF-8 text (byte 0xff at offset {(1 << 20) + 1})",
        ),
        (
            "held.csv",
            b"a" * ((1 << 20) - 1) + b"\xc3\x28",
            "not UTF-8 text (byte 0xc3 at offset 1048575)",
        ),
    ],
)
def test_a_file_that_is_no_text_is_named_with_the_offset(
    tmp_path: Path, name: str, content: bytes, says: str
) -> None:
    run = _run(tmp_path / "run")
    (run / name).write_bytes(content)
    with pytest.raises(RunDirError) as refused:
        readable_run(run)
    assert str(refused.value) in (f"{run / name}: {says}", f"cannot read {run / name}: {says}")


def test_a_long_valid_text_across_chunks_is_read(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    (run / "big.csv").write_bytes(b"a" * ((1 << 20) - 1) + "é€".encode() * 3)
    assert readable_run(run) == run


# --- a run directory holds one experiment ------------------------------------------


def test_what_a_killed_run_leaves_is_no_foreign_content(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).write_text("123\n")
    (run / f".results.csv.ab12{TEMP_SUFFIX}").write_text("half")
    (run / "traces").mkdir()
    (run / "traces" / f".t.jsonl.gz.1{TEMP_SUFFIX}").write_text("half")
    check_not_foreign(run)
    check_not_foreign(tmp_path / "absent")
    # a trace, a traces folder that is a file or a link is someone's content
    for spoil in ("trace", "file", "link"):
        other = tmp_path / spoil
        other.mkdir()
        if spoil == "trace":
            (other / "traces").mkdir()
            (other / "traces" / "t.jsonl.gz").write_text("x")
        elif spoil == "file":
            (other / "traces").write_text("x")
        else:
            (tmp_path / "elsewhere").mkdir(exist_ok=True)
            (other / "traces").symlink_to(tmp_path / "elsewhere")
        with pytest.raises(RunDirError, match=r"it holds traces\)"):
            check_not_foreign(other)


def test_a_foreign_directory_is_named_with_its_first_five_entries(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for name in "gfedcba":
        (home / name).write_text("mine")
    with pytest.raises(RunDirError) as refused:
        check_not_foreign(home)
    assert f"no {MARKER}; it holds a, b, c, d, e and 2 more)" in str(refused.value)
    (home / "g").unlink()
    with pytest.raises(RunDirError, match=r"it holds a, b, c, d, e and 1 more\); nothing"):
        check_not_foreign(home)
    (home / "f").unlink()
    with pytest.raises(RunDirError, match=r"it holds a, b, c, d, e\); nothing was run"):
        check_not_foreign(home)
    (home / MARKER).write_text("benchmark: demo\n")  # a run: its own files are no obstacle
    check_not_foreign(home)


def _stored(run: Path, experiment: Experiment) -> None:
    run.mkdir(exist_ok=True)
    (run / MARKER).write_text(yaml.safe_dump(experiment.model_dump(mode="json")))


def test_another_experiment_is_refused_naming_each_difference(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _stored(run, _exp(options={"a": {"b": 1}, "gone": True}))
    check_same_experiment(run, _exp(options={"a": {"b": 1}, "gone": True}, concurrency=7))
    with pytest.raises(RunDirError) as refused:
        check_same_experiment(run, _exp(options={"a": {"b": 2}, "new": {}}))
    lines = str(refused.value).splitlines()
    assert lines[1:4] == [
        "  options.a.b: 1 vs. 2",
        "  options.gone: true vs. (absent)",
        "  options.new: (absent) vs. {}",
    ]
    assert "(to run.replaced-<time>)" in lines[-1]


def test_a_stored_experiment_that_is_no_mapping_or_a_link_is_no_record(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / MARKER).write_text("- a\n- b\n")
    not_mapping = r"experiment\.yaml: expected a mapping of fields, got list"
    with pytest.raises(RunDirError, match=not_mapping):
        check_same_experiment(run, _exp())
    (run / MARKER).unlink()
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(_exp(seed=9).model_dump(mode="json")))
    (run / MARKER).symlink_to(other)
    check_same_experiment(run, _exp())


# --- the lock -------------------------------------------------------------------------


def test_a_held_directory_is_refused_naming_the_holder(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).write_text("a much longer earlier holder line\n")
    with run_lock(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
        held = rf"{tmp_path} is in use by another confide run \(pid {os.getpid()}\)"
        with pytest.raises(RunLockError, match=held), run_lock(tmp_path):
            pass
        with pytest.raises(RunLockError, match="in use"):
            set_aside(_run_marker(tmp_path))
        assert (tmp_path / MARKER).is_file()  # a live run is never moved
    assert not (tmp_path / LOCK_FILE).exists()
    with run_lock(tmp_path):  # free again
        pass


def _run_marker(path: Path) -> Path:
    (path / MARKER).write_text("benchmark: demo\n")
    return path


def test_a_lock_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).symlink_to(tmp_path / "victim")
    opening = r"cannot open the run lock .*\.confide\.lock: "
    with pytest.raises(RunLockError, match=opening), run_lock(tmp_path):
        pass
    assert not (tmp_path / "victim").exists()


# --- --fresh and the leftovers of killed runs ------------------------------------------


def test_fresh_moves_a_run_aside_under_a_name_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert set_aside(tmp_path / "none") is None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert set_aside(empty) is None and empty.is_dir()
    frozen = time.struct_time((2026, 1, 2, 3, 4, 5, 4, 2, 0))
    monkeypatch.setattr(rundir.time, "gmtime", lambda *_: frozen)
    places = []
    for number in range(3):
        run = _run(tmp_path / "run")
        (run / "n").write_text(str(number))
        (run / LOCK_FILE).write_text("1\n")
        aside = set_aside(run)
        assert aside is not None and not run.exists()
        assert (aside / "n").read_text() == str(number)
        assert not (aside / LOCK_FILE).exists()
        places.append(aside.name)
    stamp = "run.replaced-20260102T030405Z"
    assert places == [stamp, f"{stamp}-2", f"{stamp}-3"]


def test_fresh_that_cannot_move_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path / "run")

    def refuse(self: Path, target: Path) -> Path:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(Path, "rename", refuse)
    with pytest.raises(
        RunDirError,
        match=r"^--fresh: cannot move .*run aside to "
        r"run\.replaced-\d{8}T\d{6}Z: Invalid cross-device link; move it",
    ):
        set_aside(run)
    assert (run / MARKER).is_file()
    with run_lock(run):  # the lock taken for the move was let go
        pass


def test_prepare_sweeps_temporaries_in_the_run_and_its_output_folders(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "traces").mkdir(parents=True)
    (run / "other").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (run / "figures").symlink_to(outside)
    stale = [run / f".a{TEMP_SUFFIX}", run / "traces" / f".t{TEMP_SUFFIX}"]
    kept = [
        run / "other" / f".o{TEMP_SUFFIX}",
        outside / f".f{TEMP_SUFFIX}",
        run / "traces" / "t.jsonl.gz",
    ]
    for path in [*stale, *kept]:
        path.write_text("x")
    prepare(run)
    assert [p.exists() for p in stale] == [False, False]
    assert all(p.exists() for p in kept)
    real = tmp_path / "real"
    (real / "figures").mkdir(parents=True)
    (real / "figures" / f".g{TEMP_SUFFIX}").write_text("x")
    prepare(real)
    assert not list((real / "figures").iterdir())


def test_the_name_does_not_hang_on_the_order_options_were_given_in() -> None:
    one = _exp(model_options={"a": 1, "b": {"c": 2, "d": 3}})
    other = _exp(model_options={"b": {"d": 3, "c": 2}, "a": 1})
    assert default_run_dir(one) == default_run_dir(other)


def test_the_same_experiment_stored_with_sorted_keys_is_the_same(tmp_path: Path) -> None:
    """experiment.yaml is written with its keys sorted; a list of mappings given in
    another order is still the same experiment, resumed rather than refused."""
    experiment = _exp(options={"steps": [{"b": 1, "a": 2}]})
    _stored(tmp_path, experiment)
    check_same_experiment(tmp_path, experiment)


def test_a_dot_name_is_foreign_content_and_so_is_an_empty_folder(tmp_path: Path) -> None:
    for name, make in ((".a", Path.touch), ("data", Path.mkdir), ("zzz", Path.mkdir)):
        folder = tmp_path / name.strip(".")
        folder.mkdir()
        make(folder / name)
        with pytest.raises(RunDirError, match=rf"it holds {name}\)"):
            check_not_foreign(folder)


def test_a_missing_link_target_is_named(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    (run / "summary.csv").symlink_to(run / "gone.csv")
    with pytest.raises(RunDirError) as refused:
        readable_run(run)
    assert str(refused.value) == (
        f"{run / 'summary.csv'} links to {run / 'gone.csv'}: No such file or directory; not read"
    )


# (name, target) links made in a run, in order; the first is the one named
_ENDS_NOWHERE = {
    "itself": ([("x.csv", "x.csv")], "x.csv is a symlink loop"),
    "a ring": ([("a.json", "b.json"), ("b.json", "a.json")], "a.json is a symlink loop"),
    "a chain into a ring": (
        [("c.yaml", "r1"), ("r1", "r2"), ("r2", "r1")], "c.yaml is a symlink loop"
    ),
    "a missing target": ([("d.csv", "missing.csv")],
                         "d.csv links to missing.csv: No such file or directory"),
    "a chain to nothing": ([("e.csv", "hop"), ("hop", "nowhere")],
                           "e.csv links to hop: No such file or directory"),
    "results.csv itself": ([("results.csv", "results.csv")], "results.csv is a symlink loop"),
    "results.csv to nothing": ([("results.csv", "gone")],
                               "results.csv links to gone: No such file or directory"),
}


@pytest.mark.parametrize("case", _ENDS_NOWHERE)
def test_a_link_that_ends_nowhere_is_named_in_one_line(tmp_path: Path, case: str) -> None:
    links, says = _ENDS_NOWHERE[case]
    run = _run(tmp_path / "run", results=not case.startswith("results.csv"))
    for name, target in links:
        (run / name).symlink_to(target)
    with pytest.raises(RunDirError) as refused:
        readable_run(run)
    assert str(refused.value) == f"{run}/{says}; not read"


def test_a_link_that_cannot_be_followed_otherwise_is_named_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(tmp_path / "run")
    (run / "nfs.csv").symlink_to("results.csv")
    real_stat = Path.stat

    def stat(self: Path, *, follow_symlinks: bool = True) -> os.stat_result:
        if self.name == "nfs.csv" and follow_symlinks:  # an NFS server lost the target
            raise OSError(errno.ESTALE, os.strerror(errno.ESTALE), str(self))
        return real_stat(self, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(Path, "stat", stat)
    with pytest.raises(RunDirError) as refused:
        readable_run(run)
    assert str(refused.value) == (
        f"{run / 'nfs.csv'} links to results.csv: Stale file handle; not read"
    )


def test_a_run_path_that_ends_nowhere_is_named(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "dangling").symlink_to("gone")
    for command in (find_run, readable_run):
        with pytest.raises(RunDirError) as refused:
            command(tmp_path / "loop")
        assert str(refused.value) == f"{tmp_path}/loop is a symlink loop; not read"
        with pytest.raises(RunDirError) as refused:
            command(tmp_path / "dangling")
        assert str(refused.value) == (
            f"{tmp_path}/dangling links to gone: No such file or directory; not read"
        )


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda run: (run / "x.csv").symlink_to("x.csv"), "run/x.csv is a symlink loop"),
        (lambda run: (run / "d.csv").symlink_to("missing.csv"),
         "run/d.csv links to missing.csv: No such file or directory"),
        (lambda run: (run.parent / "loop").symlink_to("loop"), "loop is a symlink loop"),
    ],
    ids=["a file loops", "a file's target is missing", "the run path loops"],
)
def test_confide_report_names_a_link_that_ends_nowhere_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], None], says: str,
) -> None:
    from confide.cli.main import main

    run = _run(tmp_path / "run")
    make(run)
    given = "loop" if says.startswith("loop") else "run"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["confide", "report", given])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    assert capsys.readouterr().err == f"error: {says}; not read\n"
    assert not (run / "report.html").exists()


def test_a_latest_link_on_a_file_system_without_links_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(tmp_path / "r")

    def refuse(self: Path, target: str, target_is_directory: bool = False) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    point_latest(run)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_the_lock_file_is_readable_by_all_and_writable_by_its_owner_only(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        with run_lock(tmp_path):
            assert stat.S_IMODE((tmp_path / LOCK_FILE).stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_a_lock_file_removed_during_the_run_ends_the_run_quietly(tmp_path: Path) -> None:
    with run_lock(tmp_path):
        (tmp_path / LOCK_FILE).unlink()
    assert not (tmp_path / LOCK_FILE).exists()


def _racing(monkeypatch: pytest.MonkeyPatch, path: Path, race: Callable[[], None]) -> None:
    """The first lock taken also plays what another process did in the meantime."""
    real = fcntl.flock
    raced = []

    def flock(fd: int, operation: int) -> None:
        real(fd, operation)
        if not raced:
            raced.append(True)
            race()

    monkeypatch.setattr(rundir.fcntl, "flock", flock)


@pytest.mark.parametrize("made", ["before", "after"])
def test_a_lock_file_replaced_while_locking_is_locked_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made: str
) -> None:
    """The holder removed the file we opened and another run put a new one in its place
    (made before or after ours: its inode sorts either side): the lock on the old file
    guards nothing, so the new file is opened and locked."""
    path = tmp_path / LOCK_FILE
    other = tmp_path / "other"
    if made == "before":
        other.write_text("")

    def replace() -> None:
        path.unlink()
        if made == "after":
            other.write_text("")
        other.rename(path)

    _racing(monkeypatch, path, replace)
    with run_lock(tmp_path):
        assert path.read_text() == f"{os.getpid()}\n"
        fd = os.open(path, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)


def test_a_lock_file_removed_while_locking_is_made_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / LOCK_FILE
    _racing(monkeypatch, path, path.unlink)
    with run_lock(tmp_path):
        assert path.read_text() == f"{os.getpid()}\n"


def test_a_lock_file_made_a_link_while_locking_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / LOCK_FILE
    moved = tmp_path / "moved"

    def link() -> None:
        path.rename(moved)
        path.symlink_to(moved)

    _racing(monkeypatch, path, link)
    with pytest.raises(RunLockError, match="cannot open the run lock"), run_lock(tmp_path):
        pass
    assert moved.read_text() == ""


def test_a_holder_that_wrote_no_pid_is_named_unknown(tmp_path: Path) -> None:
    fd = os.open(tmp_path / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(RunLockError, match=r"\(pid unknown\)"), run_lock(tmp_path):
            pass
    finally:
        os.close(fd)


def test_a_lock_the_file_system_refuses_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(rundir.fcntl, "flock", refuse)
    refused = rf"^cannot lock {tmp_path / LOCK_FILE}: No locks available$"
    with pytest.raises(RunLockError, match=refused), run_lock(tmp_path):
        pass
