"""Unreadable input gives one clear error naming the file, never a traceback: non-UTF-8 bytes, JSON
nested too deep, a directory where a file belongs, a
device that never ends, a read-only or full output directory; and the values validation
must refuse (trace schema versions, CalBench numbers, generated file names, empty
scenario lists, failed demo episodes)."""

from __future__ import annotations

import errno
import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.core.trace import TraceError, TraceWriter, read_trace, trace_text
from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.scenario import load_scenarios
from confide.errors import ConfideError
from confide.registry import benchmark_ids, get_benchmark
from confide.untrusted import MAX_DEPTH, check_plain, load_json, parse_yaml, read_text

BENCHMARKS = ["calbench", "demo", "incognita", "sotopia-tom"]


def fails(args: list[str]) -> str:
    """The ConfideError message of a CLI call that must fail cleanly."""
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, ConfideError), (result.exception, result.output)
    return str(result.exception)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"id": "x"}\n\xff\xfe\x00garbage')
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    folder = tmp_path / "folder.json"
    folder.mkdir()
    return {"binary": binary, "deep": deep, "folder": folder}


@pytest.mark.parametrize("benchmark", BENCHMARKS)
@pytest.mark.parametrize(
    ("kind", "says"),
    [("binary", "line 2: not UTF-8 text (byte 0xff"), ("deep", "nested more than 100"),
     ("folder", "is a directory")],
)
def test_unreadable_task_files(
    benchmark: str, kind: str, says: str, files: dict[str, Path], tmp_path: Path
) -> None:
    message = fails(["run", benchmark, "--tasks", str(files[kind]), "--out",
                     str(tmp_path / "run"), "--no-progress"])
    assert files[kind].name in message and says in message


@pytest.mark.parametrize(("kind", "says"), [("binary", "not UTF-8"), ("folder", "directory")])
def test_trace_show_refuses_what_is_not_a_trace(
    kind: str, says: str, files: dict[str, Path]
) -> None:
    message = fails(["trace", "show", str(files[kind])])
    assert files[kind].name in message and says in message


def test_replay_of_a_device_never_reads_it() -> None:
    message = fails(["models", "try", "replay//dev/zero", "hi"])
    assert "/dev/zero is not a regular file" in message


def test_reads_stop_at_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text("[" + "1," * 100 + "1]", encoding="utf-8")
    with pytest.raises(ConfideError, match=r"big\.json is 203 bytes; the limit is 100"):
        read_text(big, limit=100)


def test_surrogate_escapes_and_depth_are_refused_in_json_and_yaml(tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"name": "\\ud800"}', encoding="utf-8")
    with pytest.raises(ConfideError, match=r"odd\.json: the string .* lone surrogate"):
        load_json(odd)
    with pytest.raises(ConfideError, match="nested more than 100"):
        parse_yaml("a: " + "[" * 1000, "x.yaml")
    nested: Any = []
    for _ in range(MAX_DEPTH):
        nested = [nested]
    with pytest.raises(ConfideError, match="nested more than 100"):
        check_plain(nested, "x")
    check_plain(nested[0], "x")  # exactly MAX_DEPTH levels is fine


def test_experiment_file_errors_name_the_file(files: dict[str, Path], tmp_path: Path) -> None:
    experiment = tmp_path / "exp.yaml"
    experiment.write_bytes(b"benchmark: demo\nnote: \xff\n")
    assert "exp.yaml: line 2: not UTF-8" in fails(["run", str(experiment)])
    experiment.write_text("benchmark: demo\nnote: " + "[" * 1000, encoding="utf-8")
    assert "exp.yaml: YAML nested more than 100" in fails(["run", str(experiment)])


def test_leaderboard_refuses_a_non_utf8_results_file(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.csv").write_bytes(b"episode_id,seat\n\xff,1\n")
    result = CliRunner().invoke(app, ["leaderboard", str(run)])
    assert result.exit_code == 1 and "results.csv: line 2: not UTF-8" in result.output


def test_an_output_directory_that_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    message = fails(["run", "demo", "--out", str(blocker / "run"), "--no-progress"])
    assert f"cannot write the run directory {blocker / 'run'}" in message


def test_a_full_disk_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(self: TraceWriter, event: object, now: float) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TraceWriter, "_write", full)
    message = fails(["run", "demo", "--out", str(tmp_path / "run"), "--no-progress"])
    assert message == f"cannot write the run directory {tmp_path / 'run'}: No space left on device"


def test_trace_schema_version_is_checked(tmp_path: Path) -> None:
    CliRunner().invoke(app, ["run", "demo", "--limit", "1", "--out", str(tmp_path / "run"),
                             "--no-progress"])
    [path] = (tmp_path / "run" / "traces").glob("*.jsonl.gz")
    read_trace(path)
    lines = trace_text(path).splitlines()
    header = json.loads(lines[0])
    for version, message in ((99, "a newer confide"), (1, "an older confide")):
        header["schema_version"] = version
        path.write_bytes(
            gzip.compress(("\n".join([json.dumps(header), *lines[1:]]) + "\n").encode())
        )
        with pytest.raises(TraceError, match=rf"jsonl.gz: written by {message} \(trace "
                           rf"schema {version}\)"):
            read_trace(path)


def _calbench_record() -> dict[str, Any]:
    task = get_benchmark("calbench").load_tasks("tiny", None)[0]
    record: dict[str, Any] = task.model_dump(mode="json")
    return record


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("cost_display", {"1": -1}, "cost_display.1"),
        ("cost_display", {"0": 5}, "cost_display.0"),
        ("densities", [math.nan], "densities"),
        ("densities", [1.5], "densities"),
        ("num_slots", True, "num_slots"),
        ("num_agents", 3.0, "num_agents"),
    ],
)
def test_calbench_numbers_are_validated(
    field: str, value: Any, says: str, tmp_path: Path
) -> None:
    record = _calbench_record()
    record[field] = value
    if field == "densities":
        record[field] = value * record["num_agents"]
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(CalendarDataError, match=says):
        load_scenarios(path)


def test_scenario_generation_cannot_write_outside_out(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "out"
    message = fails(["scenarios", "generate", "--generator", "mock/json", "--judge",
                     "mock/json", "--out", str(out), "--prefix", "../../x"])
    assert "prefix '../../x' must be letters" in message
    assert not (tmp_path / "a").exists()


def test_an_empty_scenario_list_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    result = CliRunner().invoke(app, ["scenarios", "validate", str(empty)])
    assert result.exit_code == 2
    assert "empty.json: the file holds an empty list" in result.output


def test_demo_run_with_failed_episodes_reports_them(tmp_path: Path) -> None:
    # a model that passes the preflight but fails every call (an unknown mock name is now
    # refused before any episode runs: tests/runner/test_preflight.py)
    path = tmp_path / "exp.yaml"
    path.write_text("benchmark: demo\nlineups: [mock/echo]\nmodel_options:\n"
                    "  faults: {rate: 1.0, kinds: [timeout]}\n"
                    "  retry: {base_delay_s: 0.0, max_delay_s: 0.0}\n")
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run"),
                                      "--no-progress"])
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1, result.output
    assert "3 episodes (0 resumed, 3 failed)" in result.output


@pytest.mark.parametrize("benchmark", benchmark_ids())
def test_every_summary_skips_failed_episodes(benchmark: str) -> None:
    spec = get_benchmark(benchmark)
    assert spec.summarize is not None
    failed = {"episode_id": "e", "task_id": "t", "lineup": "x", "condition": "",
              "repetition": 0, "seed": 0, "status": "error", "error": "boom"}
    assert spec.summarize([failed]) == []
