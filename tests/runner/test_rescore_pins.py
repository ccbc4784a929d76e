"""`confide rescore` pinned on small, fast cases (the slow end-to-end checks are in
test_rescore.py): where a rescore goes by default, what it refuses and how it says so,
which traces it leaves out and why, what `rescore.json` records, how redacted options
are left out and their fingerprints kept, and what each rescored trace's header says."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from confide import __version__
from confide.core.trace import read_trace, trace_files
from confide.errors import ConfideError
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.registry import get_benchmark
from confide.runner import build_experiment, run_experiment
from confide.runner.rescore import (
    RECORD,
    RescoreError,
    _check_roles,
    _check_target,
    _json,
    _keep,
    default_target,
    redacted_options,
    rescore_run,
)
from confide.runner.results import read_csv

RUN = {"benchmark": "calbench", "suite": "tiny", "lineups": ["imap", "mock/rp-broken"],
       "conditions": ["dm"], "limit": 2}


def _broken(messages: list[ChatMessage], config: GenerateConfig) -> str:
    raise RuntimeError("rp-broken always fails")


@pytest.fixture(autouse=True, scope="module")
def mocks() -> Iterator[None]:
    register_mock("rp-broken", lambda **_: MockModel(_broken, name="rp-broken"), replace=True)
    yield
    unregister_mock("rp-broken")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory, mocks: None) -> Path:
    """Four CalBench episodes: two played by `imap`, two failed (a model that raises)."""
    out = tmp_path_factory.mktemp("played") / "run"
    run_experiment(build_experiment({**RUN, "output_dir": str(out)}), show_progress=False)
    return out


@pytest.fixture
def source(played: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(played, out)
    return out


def _traces(run: Path) -> dict[str, Path]:
    """Episode id -> trace file, ordered by name."""
    return {p.name.removesuffix(".jsonl.gz"): p for p in trace_files(run / "traces")}


# ----- where it goes, what it refuses ------------------------------------------------------


def test_the_default_target_is_the_first_free_sibling(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert default_target(run) == tmp_path / "run-rescored"
    (tmp_path / "run-rescored").mkdir()
    assert default_target(run) == tmp_path / "run-rescored-2"
    (tmp_path / "run-rescored-2").write_text("a file takes the name too")
    assert default_target(run) == tmp_path / "run-rescored-3"


def test_the_default_target_of_a_dot_path_is_named_after_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "myrun"
    run.mkdir()
    monkeypatch.chdir(run)
    assert default_target(Path(".")) == tmp_path / "myrun-rescored"
    monkeypatch.chdir(run / "..")
    assert default_target(Path("myrun")) == Path("myrun-rescored")


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (".", "is the run being rescored"),
        ("traces", "is inside the run being rescored"),
        ("a/b", "is inside the run being rescored"),
    ],
)
def test_a_target_in_the_source_is_named(tmp_path: Path, where: str, message: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    target = run / where
    with pytest.raises(RescoreError) as caught:
        _check_target(run, target)
    assert str(caught.value) == (
        f"--out {target} {message.removesuffix(' the run being rescored')} the run being "
        f"rescored ({run}); a rescore never writes into its source: give a directory "
        "outside it"
    )


def test_a_target_beside_the_source_is_fine_unless_it_holds_something(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    _check_target(run, tmp_path / "run2")  # a sibling whose name starts with the run's
    _check_target(run, tmp_path / "new")  # not there yet
    (tmp_path / "empty").mkdir()
    _check_target(run, tmp_path / "empty")  # there and empty
    (tmp_path / "file").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    for name in ("file", "full"):
        with pytest.raises(RescoreError, match=f"--out {tmp_path / name} exists and is not "
                           "empty; give a new directory"):
            _check_target(run, tmp_path / name)


def test_only_score_roles_are_rebound_and_unscored_benchmarks_refused() -> None:
    spec = get_benchmark("calbench")
    _check_roles(spec, {})
    _check_roles(spec, {"judge": "mock/json"})
    with pytest.raises(RescoreError) as caught:
        _check_roles(spec, {"judge": "mock/json", "zz": "x", "aa": "y"})
    assert str(caught.value) == (
        "calbench: --role aa takes part in play, so changing it needs a new run (confide "
        "run); a rescore rebinds only score roles: judge"
    )
    no_roles = dataclasses.replace(spec, roles=tuple(r for r in spec.roles if not r.scoring))
    with pytest.raises(RescoreError, match=r"only score roles: none$"):
        _check_roles(no_roles, {"judge": "x"})
    unscored = dataclasses.replace(spec, score_episode=None)
    with pytest.raises(RescoreError, match=r"^calbench cannot be rescored: its episodes are "
                       r"not scored apart$"):
        _check_roles(unscored, {})


# ----- redacted options ---------------------------------------------------------------------


def test_redacted_options_are_left_out_and_named_at_every_depth() -> None:
    options = {
        "openai-api": {"api_key": "***", "base_url": "http://u:***@host/v1", "timeout": 5,
                       "deeper": {"token": "x***y", "keep": "plain"}},
        "other": "***",
        "flag": True,
        "note": "no mask",
    }
    kept, hidden = redacted_options(options)
    assert kept == {"openai-api": {"timeout": 5, "deeper": {"keep": "plain"}}, "flag": True,
                    "note": "no mask"}
    assert hidden == {"model_options.openai-api.api_key", "model_options.openai-api.base_url",
                      "model_options.openai-api.deeper.token", "model_options.other"}
    assert redacted_options({}) == ({}, set())


def test_the_new_fingerprint_keeps_the_stored_value_of_each_hidden_key() -> None:
    trace: Any = SimpleNamespace(header=SimpleNamespace(fingerprint={
        "model_options.a.api_key": "stored-hash", "seed": "old-seed", "other": "old"}))
    new = {"model_options.a.api_key": "hash-of-mask", "seed": "new-seed",
           "roles.judge": "new-judge", "model_options.b.key": "hash-b"}
    hidden = {"model_options.a.api_key", "model_options.b.key"}
    assert _keep(new, trace, hidden) == {
        "model_options.a.api_key": "stored-hash",  # the run's hash of the real value
        "seed": "new-seed",
        "roles.judge": "new-judge",
        # a hidden key the trace never stored is dropped, never the mask's hash
    }


def test_the_record_is_sorted_indented_json_with_a_final_newline() -> None:
    assert _json({"b": 1, "a": [1, 2]}) == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'


# ----- a whole rescore ------------------------------------------------------------------------


def test_a_rescore_records_what_it_did(source: Path, tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in source.rglob("*") if p.is_file()}
    summary = rescore_run(source, roles={"judge": "mock/json"}, out=tmp_path / "new")
    assert {p: p.read_bytes() for p in source.rglob("*") if p.is_file()} == before
    assert (summary.source, summary.run_dir) == (source, tmp_path / "new")
    assert (summary.rescored, summary.kept_failed, summary.failed, summary.not_rescored) == (
        2, 2, {}, {})
    record = json.loads((tmp_path / "new" / RECORD).read_text())
    assert (tmp_path / "new" / RECORD).read_text() == _json(record)
    assert {k: v for k, v in record.items() if k not in ("started_at", "usage")} == {
        "source": str(source.resolve()),
        "benchmark": "calbench",
        "roles_before": {},
        "roles_after": {"judge": "mock/json"},
        "episodes": 4,
        "rescored": 2,
        "failed_in_rescore": [],
        "kept_failed": 2,
        "not_finished": 0,
        "not_rescored": {},
        "confide": __version__,
    }
    rows = read_csv(tmp_path / "new" / "results.csv")
    assert sorted(r["status"] for r in {r["episode_id"]: r for r in rows}.values()) == [
        "error", "error", "ok", "ok"]
    # failed traces are copied as they are; rescored ones carry the new binding
    old, new = _traces(source), _traces(tmp_path / "new")
    assert set(new) == set(old)
    for episode, path in new.items():
        header = read_trace(path).header
        if "rp-broken" in episode:
            assert path.read_bytes() == old[episode].read_bytes()
        else:
            assert header.config["roles"] == {"judge": "mock/json"}
            # the old fingerprint with the new judge: a later run with it resumes here
            assert header.fingerprint == {**read_trace(old[episode]).header.fingerprint,
                                          "roles.judge": '"mock/json"'}
    assert "mock/json" in (tmp_path / "new" / "experiment.yaml").read_text()


def test_a_judge_that_fails_in_the_rescore_is_named(source: Path, tmp_path: Path) -> None:
    summary = rescore_run(source, roles={"judge": "mock/rp-broken"}, out=tmp_path / "new")
    ok = sorted(e for e in _traces(source) if "rp-broken" not in e)
    assert summary.rescored == 2 and sorted(summary.failed) == ok
    assert all("rp-broken always fails" in error for error in summary.failed.values())
    record = json.loads((tmp_path / "new" / RECORD).read_text())
    assert record["failed_in_rescore"] == ok and record["rescored"] == 2
    for episode in ok:
        footer = read_trace(_traces(tmp_path / "new")[episode]).footer
        assert footer is not None and footer.status == "error"


def test_every_episode_left_out_is_named_with_its_reason(source: Path, tmp_path: Path) -> None:
    traces = _traces(source)
    gone, cut, linked, kept = sorted(traces)
    traces[gone].unlink()
    lines = gzip.decompress(traces[cut].read_bytes()).splitlines(keepends=True)
    traces[cut].write_bytes(gzip.compress(b"".join(lines[:-1])))
    outside = tmp_path / "elsewhere.jsonl.gz"
    traces[linked].rename(outside)
    traces[linked].symlink_to(outside)
    summary = rescore_run(source, out=tmp_path / "new")
    assert summary.not_rescored == {
        gone: "no trace (the episode never finished)",
        cut: f"{traces[cut]} has no footer (cut off before its end)",
        linked: f"{traces[linked]} is a symlink (never followed)",
    }
    assert summary.rescored + summary.kept_failed == 1
    record = json.loads((tmp_path / "new" / RECORD).read_text())
    assert record["not_finished"] == 3 and record["episodes"] == 4
    assert record["not_rescored"] == summary.not_rescored
    assert set(_traces(tmp_path / "new")) == {kept}


def test_traces_of_another_configuration_are_all_refused_at_once(
    source: Path, tmp_path: Path
) -> None:
    experiment = source / "experiment.yaml"
    experiment.write_text(experiment.read_text().replace("seed: 0", "seed: 5"))
    with pytest.raises(RescoreError) as caught:
        rescore_run(source, out=tmp_path / "new")
    lines = str(caught.value).splitlines()
    assert lines[0] == f"cannot rescore {source}:"
    assert len(lines) == 5
    assert all(line.startswith("  ") and "made under another configuration than "
               f"{experiment} (differs: " in line for line in lines[1:])
    assert not (tmp_path / "new").exists()


def test_more_than_ten_problems_are_counted_not_listed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run_experiment(build_experiment({**RUN, "lineups": ["imap", "sdmap"], "limit": 6,
                                     "output_dir": str(run)}), show_progress=False)
    traces = list(_traces(run).values())
    assert len(traces) == 12
    experiment = run / "experiment.yaml"
    experiment.write_text(experiment.read_text().replace("seed: 0", "seed: 5"))

    def refused() -> list[str]:
        with pytest.raises(RescoreError) as caught:
            rescore_run(run, out=tmp_path / "new")
        return str(caught.value).splitlines()

    assert len(refused()) == 12 and refused()[-1] == "  ... and 2 more"
    traces[0].unlink()  # no trace: left out, not a problem
    assert len(refused()) == 12 and refused()[-1] == "  ... and 1 more"
    traces[1].unlink()
    lines = refused()
    assert len(lines) == 11 and not any(line.startswith("  ... and") for line in lines)


def test_an_unreadable_trace_is_a_problem_named_with_the_others(
    source: Path, tmp_path: Path
) -> None:
    broken = list(_traces(source).values())
    for path in broken:
        path.write_bytes(gzip.compress(b"this is not a trace\n"))
    with pytest.raises(RescoreError) as caught:
        rescore_run(source, out=tmp_path / "new")
    lines = str(caught.value).splitlines()
    assert lines[0] == f"cannot rescore {source}:" and len(lines) == 1 + len(broken)
    assert sorted(line.split(":")[0].strip() for line in lines[1:]) == sorted(map(str, broken))
    assert not (tmp_path / "new").exists()


def test_a_bad_new_judge_fails_before_anything_is_written(source: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfideError, match=r"^--role judge=mock/rp-nothing: unknown mock"):
        rescore_run(source, roles={"judge": "mock/rp-nothing"}, out=tmp_path / "new")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("late", [".a", "late.txt"])  # sorting before and after the lock
def test_a_target_filled_after_the_check_is_refused(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: str
) -> None:
    from confide.runner import rescore

    target = tmp_path / "new"

    def fill(source: Path, target: Path) -> None:
        target.mkdir()
        (target / late).write_text("someone else")

    monkeypatch.setattr(rescore, "_check_target", fill)
    with pytest.raises(RescoreError, match="exists and is not empty"):
        rescore_run(source, out=target)
    assert sorted(p.name for p in target.iterdir()) == [late]


def _edit_header(path: Path, change: Any) -> None:
    """Rewrite the first line (the header) of a gzipped trace through `change(dict)`."""
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    header = json.loads(lines[0])
    change(header)
    path.write_bytes(gzip.compress(("\n".join([json.dumps(header), *lines[1:]]) + "\n").encode()))


def _played(source: Path) -> Path:
    return next(p for e, p in _traces(source).items() if "rp-broken" not in e)


def test_an_older_scoring_version_is_no_obstacle(source: Path, tmp_path: Path) -> None:
    _edit_header(_played(source),
                 lambda h: h["fingerprint"].update({"scoring_version": "0"}))
    summary = rescore_run(source, out=tmp_path / "new")
    assert summary.rescored == 2
    rescored = read_trace(_traces(tmp_path / "new")[_played(source).name.split(".")[0]])
    assert rescored.header.fingerprint["scoring_version"] == "1"  # the current scorer's


def test_a_played_trace_without_a_scoring_marker_is_refused(source: Path, tmp_path: Path) -> None:
    path = _played(source)
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    path.write_bytes(gzip.compress("\n".join(
        line for line in lines if '"kind":"scoring"' not in line).encode() + b"\n"))
    with pytest.raises(RescoreError) as caught:
        rescore_run(source, out=tmp_path / "new")
    assert str(caught.value).splitlines()[1:] == [
        f"  {path}: no scoring marker (written by confide {__version__}, before play and "
        "score were separate); run it again instead"]


def test_header_modes_keep_only_models_still_in_use(source: Path, tmp_path: Path) -> None:
    path = _played(source)
    _edit_header(path, lambda h: h["config"].update(
        {"structured_output": {"mock/json": "tool", "gone/model": "json_schema"}}))
    rescore_run(source, roles={"judge": "mock/json:basic"}, out=tmp_path / "new")
    episode = path.name.split(".")[0]
    header = read_trace(_traces(tmp_path / "new")[episode]).header
    assert header.config["structured_output"] == {"mock/json": "tool"}
    other = next(e for e in _traces(tmp_path / "new") if e != episode and "rp-broken" not in e)
    assert "structured_output" not in read_trace(_traces(tmp_path / "new")[other]).header.config


def test_redacted_options_neither_block_nor_change_the_fingerprint(tmp_path: Path) -> None:
    secret = {"openai-api": {"base_url": "http://user:hunter2hunter2@127.0.0.1:9/v1"}}
    run = tmp_path / "run"
    run_experiment(build_experiment({**RUN, "lineups": ["imap"], "limit": 1,
                                     "model_options": secret, "output_dir": str(run)}),
                   show_progress=False)
    assert "hunter2" not in (run / "experiment.yaml").read_text()
    out = tmp_path / "deeper" / "still" / "new"  # parents are made
    summary = rescore_run(run, out=out)
    assert summary.rescored == 1
    (episode,) = _traces(run)
    key = "model_options.openai-api.base_url"  # the run's hash of the real URL
    stored = read_trace(_traces(run)[episode]).header.fingerprint
    assert key in stored and read_trace(_traces(out)[episode]).header.fingerprint == stored


def test_an_existing_empty_target_is_used(source: Path, tmp_path: Path) -> None:
    (tmp_path / "new").mkdir()
    assert rescore_run(source, out=tmp_path / "new").rescored == 2


def test_the_search_for_a_free_name_gives_up_after_9999_tries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tried: list[str] = []

    def taken(self: Path) -> bool:
        tried.append(self.name)
        return True

    monkeypatch.setattr(Path, "exists", taken)
    with pytest.raises(RescoreError, match=r"^no free name for a rescore of .*run; give --out$"):
        default_target(tmp_path / "run")
    assert len(tried) == 9999 and tried[-1] == "run-rescored-9999"


def test_the_benchmarks_comparison_with_its_source_is_run_and_returned(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from confide.runner import rescore

    calls: list[tuple[Path, Path]] = []

    def compare(old: Path, new: Path) -> list[dict[str, Any]]:
        calls.append((old, new))
        return [{"metric": "x", "agreement": 1.0}]

    spec = dataclasses.replace(get_benchmark("calbench"), compare_scores=compare)
    monkeypatch.setattr(rescore, "get_benchmark", lambda _: spec)
    summary = rescore_run(source, out=tmp_path / "new")
    assert calls == [(source, tmp_path / "new")]
    assert summary.comparison == [{"metric": "x", "agreement": 1.0}]


def test_the_played_events_keep_their_own_times(source: Path, tmp_path: Path) -> None:
    rescore_run(source, roles={"judge": "mock/json"}, out=tmp_path / "new")
    path = _played(source)
    old = read_trace(path).events
    new = read_trace(tmp_path / "new" / "traces" / path.name).events
    played = next(i for i, e in enumerate(old) if e.kind == "scoring")
    assert played > 1
    assert [e.ts for e in new[:played]] == [e.ts for e in old[:played]]


class _Stop(BaseException):
    """Not an error of the episode: an interrupt, which must leave no partial trace."""


def test_an_interrupted_rescore_leaves_no_partial_trace(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from confide.runner import rescore

    async def interrupted(ctx: Any, score: Any) -> Any:
        raise _Stop

    monkeypatch.setattr(rescore, "score_played", interrupted)
    played = [p for e, p in _traces(source).items() if "rp-broken" not in e]
    played[1].unlink()  # one episode in scoring: no other is cut short in its setup
    with pytest.raises(_Stop):
        rescore_run(source, out=tmp_path / "new")
    assert [p.name for p in (tmp_path / "new" / "traces").iterdir()
            if "rp-broken" not in p.name] == []


def test_a_played_models_header_mode_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that played keeps its structured-output entry in the rescored header."""
    import confide.envs.calbench.env as calbench_env
    from confide.core.benchmark import SeatSpec
    from confide.envs.calbench.participants import ImapParticipant, make_reference

    def stand_in(seat: str, spec: SeatSpec, options: Any, *rest: Any) -> Any:
        if not spec.is_model:
            return make_reference(seat, spec.raw, options)
        player = ImapParticipant(seat)  # the model's seat played by IMAP under its name
        player.name = spec.raw
        return player

    monkeypatch.setattr(calbench_env, "make_participant", stand_in)
    run = tmp_path / "run"
    run_experiment(build_experiment({**RUN, "lineups": ["mock/json,imap,imap"], "limit": 1,
                                     "output_dir": str(run)}), show_progress=False)
    ((episode, path),) = _traces(run).items()
    footer = read_trace(path).footer
    assert footer is not None and footer.status == "ok"
    _edit_header(path, lambda h: h["config"].update(
        {"structured_output": {"mock/json": "tool", "gone/model": "json_schema"}}))
    rescore_run(run, out=tmp_path / "new")
    header = read_trace(_traces(tmp_path / "new")[episode]).header
    assert header.config["structured_output"] == {"mock/json": "tool"}


def test_a_trace_whose_stored_fingerprint_differs_either_way_is_refused(
    source: Path, tmp_path: Path
) -> None:
    path = _played(source)
    _edit_header(path, lambda h: h["fingerprint"].update({"seed": "9"}))  # sorts after "0"
    with pytest.raises(RescoreError) as caught:
        rescore_run(source, out=tmp_path / "new")
    assert str(caught.value).splitlines()[1:] == [
        f"  {path}: made under another configuration than {source / 'experiment.yaml'} "
        "(differs: seed)"]
