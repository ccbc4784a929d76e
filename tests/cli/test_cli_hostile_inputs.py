"""Hostile inputs: each is refused with one line naming the
file, field or value, exit status 2, quickly, and nothing is written anywhere."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest

from confide.cli.main import main
from confide.runner import build_experiment, run_experiment

LAUGHS = "".join(
    f"  {name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)
"""Nine levels of nine aliases: 9^9 (387 million) strings once expanded."""


def _snapshot(root: Path) -> dict[str, bytes | str]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else "dir")
            for p in sorted(root.rglob("*")) if not p.is_fifo()}


def _cli(args: list[str], monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    """Exit status, the lines on stderr and stdout of `confide ARGS`, in this process."""
    monkeypatch.setattr(sys, "argv", ["confide", *args])
    capsys.readouterr()
    try:
        main()
        code = 0
    except SystemExit as exited:
        code = int(exited.code or 0)
    captured = capsys.readouterr()
    return code, captured.err.splitlines(), captured.out


def _refused(args: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str], *, lines: int = 1) -> None:
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    started = time.monotonic()
    code, err, _ = _cli(args, monkeypatch, capsys)
    assert time.monotonic() - started < 20
    assert code == 2, err
    assert len(err) == lines and expected in "\n".join(err), err
    assert not any("Traceback" in line for line in err)
    assert _snapshot(tmp_path) == before


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "run"
    run_experiment(build_experiment({"benchmark": "demo", "output_dir": str(out)}),
                   show_progress=False)
    return out


@pytest.mark.parametrize("dry", [True, False])
def test_billion_laughs_experiment_fails_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    dry: bool,
) -> None:
    (tmp_path / "bomb.yaml").write_text(f"benchmark: demo\noptions:\n{LAUGHS}")
    _refused(["run", "bomb.yaml", *(["--dry-run"] if dry else [])],
             "error: bomb.yaml: YAML aliases expand to more than 1000000 values",
             tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--repetitions", "100000000", "--dry-run"],
         "repetitions 100000000: the run would plan 300,000,000 episodes"),
        (["--repetitions", "100000000"], "at most 1,000,000 per run"),
        (["--concurrency", "1000000000"], "concurrency 1000000000: at most 1024 episodes"),
    ],
    ids=["repetitions-dry-run", "repetitions", "concurrency"],
)
def test_run_size_and_concurrency_are_bounded_in_preflight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    flags: list[str], expected: str,
) -> None:
    # the preflight's message: its header line and one line for the problem
    _refused(["run", "demo", *flags], expected, tmp_path, monkeypatch, capsys, lines=2)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("nonsense", "field 'ray_address' (value: 'nonsense'): Value error, 'nonsense' is not "
                     "'auto' or host:port"),
        ("ray://127.0.0.1:10001", "is a Ray Client address"),
        ("127.0.0.1:99999", "a port from 1 to 65535"),
        ("127.0.0.1:1", "cannot reach the Ray cluster at '127.0.0.1:1': Connection refused"),
    ],
)
def test_ray_addresses_are_checked_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    address: str, expected: str,
) -> None:
    pytest.importorskip("ray")
    _refused(["run", "demo", "--backend", "ray", "--ray-address", address], expected,
             tmp_path, monkeypatch, capsys)


def _spoil(run: Path, how: str) -> str:
    """Make one input file of `run` hostile; returns the message part naming it."""
    if how == "non-utf8-results":
        (run / "results.csv").write_bytes(b"episode_id,status\n\xff\xfe,ok\n")
        return f"{run / 'results.csv'}: not UTF-8 text (byte 0xff at offset 18)"
    if how == "binary-experiment":
        (run / "experiment.yaml").write_bytes(bytes(range(128, 256)))
        return f"{run / 'experiment.yaml'}: not UTF-8 text (byte 0x80 at offset 0)"
    if how == "laughs-experiment":
        (run / "experiment.yaml").write_text(f"benchmark: demo\noptions:\n{LAUGHS}")
        return f"{run / 'experiment.yaml'}: YAML aliases expand"
    (run / "results.csv").unlink()
    os.mkfifo(run / "results.csv")
    return f"{run / 'results.csv'} is not a regular file"


@pytest.mark.parametrize("how", ["non-utf8-results", "binary-experiment",
                                 "laughs-experiment", "fifo-results"])
@pytest.mark.parametrize("command", [["view", "{run}", "--bundle", "share"],
                                     ["report", "{run}"], ["trace", "list", "{run}"]],
                         ids=["view", "report", "trace-list"])
def test_reading_commands_name_a_bad_file(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], how: str, command: list[str],
) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run, run)
    expected = _spoil(run, how)
    args = [part.format(run=run) for part in command]
    _refused(args, expected, tmp_path, monkeypatch, capsys)


def test_report_given_a_fifo_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "pipe")
    _refused(["report", "pipe"], "error: pipe is not a run directory", tmp_path, monkeypatch,
             capsys)


def test_view_port_out_of_range_or_busy(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _refused(["view", str(demo_run), "--port", "70000"], "--port 70000 is not a port number",
             tmp_path, monkeypatch, capsys)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        _refused(["view", str(demo_run), "--port", str(port)],
                 f"--port {port}: cannot listen on 127.0.0.1:{port}: Address already in use",
                 tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize("task_id", ["<script>", "../../x"])
def test_convert_names_a_task_id_that_cannot_be_a_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    task_id: str,
) -> None:
    from confide.envs.incognita.loaders import save_world
    from confide.envs.incognita.scenario import load_suite

    save_world(load_suite()[0], tmp_path / "world.json")
    order = "#W4114088"
    find = {"name": "find_user_id_by_name_zip",
            "arguments": {"first_name": "Anders", "last_name": "Holloway", "zip": "40239"}}
    (tmp_path / "tasks.json").write_text(json.dumps([{
        "id": task_id,
        "user_scenario": {"instructions": {"reason_for_call": (
            f"You want to know the status of your order {order}.\n"
            "You are Anders Holloway in zip code 40239.")}},
        "evaluation_criteria": {"actions": [
            find, {"name": "get_order_details", "arguments": {"order_id": order}}]},
    }]))
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    code, err, out = _cli(
        ["incognita", "convert", "--tasks", "tasks.json", "--world", "world.json"],
        monkeypatch, capsys)
    assert code == 0 and not err, err
    assert "not converted (1):" in out
    assert f"task id {task_id!r} cannot name a card" in out
    assert _snapshot(tmp_path) == before
    _refused(["run", "incognita", "--tasks", "tasks.json", "--world", "world.json"],
             "--tasks tasks.json: no task converts", tmp_path, monkeypatch, capsys, lines=2)


@pytest.mark.parametrize("where", ["file", "option"])
def test_a_huge_yaml_integer_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    where: str,
) -> None:
    digits = "9" * 5000
    (tmp_path / "big.yaml").write_text(f"benchmark: demo\nseed: {digits}\n")
    args = (["run", "big.yaml", "--dry-run"] if where == "file"
            else ["run", "demo", "--option", f"rounds={digits}", "--dry-run"])
    source = "big.yaml" if where == "file" else "--option rounds"
    _refused(args, f"error: {source}: unreadable YAML value: Exceeds the limit (4300 digits)",
             tmp_path, monkeypatch, capsys)
