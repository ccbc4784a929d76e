"""Entry points, in process: a distribution is "installed" by putting its `.dist-info`
(METADATA, entry_points.txt) and its module on sys.path, which is all importlib.metadata
reads. Benchmarks, participants and model providers register; a broken plugin is named
without hiding the others; a clash is refused."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide import plugins
from confide.cli.main import app
from confide.llm import ChatMessage, GenerateConfig, ModelSpecError, get_model
from confide.llm.spec import parse_spec
from confide.registry import benchmark_ids, catalog, get_benchmark
from confide.testing.conformance import run_once

EXAMPLE_SRC = Path(__file__).resolve().parents[2] / "examples/confide-example-plugin/src"

MODULE = '''
from confide_example.rendezvous import SPEC as RENDEZVOUS
from confide_example.provider import make_model
from confide_example.agents import echo_relay

NOT_A_SPEC = "rendezvous"


def no_model(name, **options):
    return "not a model"
'''

Install = Callable[[str, str], None]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """`install(dist_name, entry_points_txt)`: a distribution whose entry points may use
    the module `fake_plugin` (above) and the example package."""
    (tmp_path / "fake_plugin.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE_SRC))

    def _install(name: str, entry_points: str) -> None:
        info = tmp_path / f"{name.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
        plugins.refresh()

    yield _install
    plugins.refresh()


def test_a_benchmark_plugin_is_listed_and_runs(install: Install) -> None:
    install("good-plugin", """
        [confide.benchmarks]
        rendezvous = fake_plugin:RENDEZVOUS
    """)
    assert "rendezvous" in benchmark_ids()
    spec = get_benchmark("rendezvous")
    entries, problems = catalog()
    assert problems == []
    assert [e.id for e in entries] == ["calbench", "demo", "incognita", "rendezvous",
                                       "sotopia-tom"]
    assert entries[3].participants == ("earliest", "open")
    capture = run_once(spec, spec.load_tasks(None, None)[0], "open")
    assert capture.result is not None and capture.result.metrics["day"] == 3


def test_a_broken_plugin_is_named_and_the_others_are_still_listed(install: Install) -> None:
    install("good-plugin", """
        [confide.benchmarks]
        rendezvous = fake_plugin:RENDEZVOUS
    """)
    install("bad-plugin", """
        [confide.benchmarks]
        broken = no_such_module_anywhere:SPEC
        wrong-type = fake_plugin:NOT_A_SPEC
        other-id = fake_plugin:RENDEZVOUS
        demo = fake_plugin:RENDEZVOUS
    """)
    entries, problems = catalog()
    assert [e.id for e in entries] == ["calbench", "demo", "incognita", "rendezvous",
                                       "sotopia-tom"]
    assert get_benchmark("demo").id == "demo"  # a builtin is never replaced
    assert len(problems) == 4
    joined = "\n".join(problems)
    for expected in (
        "broken = no_such_module_anywhere:SPEC (from bad-plugin) failed to load: "
        "ModuleNotFoundError",
        "wrong-type = fake_plugin:NOT_A_SPEC (from bad-plugin) is a str, not a BenchmarkSpec",
        "other-id = fake_plugin:RENDEZVOUS (from bad-plugin) has id 'rendezvous'",
        "demo = fake_plugin:RENDEZVOUS (from bad-plugin) is ignored: 'demo' is a builtin",
    ):
        assert expected in joined

    result = CliRunner().invoke(app, ["benchmarks"])
    assert result.exit_code == 1
    assert "rendezvous" in result.stdout and "sotopia-tom" in result.stdout
    assert "error: confide.benchmarks plugin broken = no_such_module_anywhere:SPEC" in (
        result.stderr
    )


def test_two_distributions_claiming_one_name_are_refused(install: Install) -> None:
    install("one-plugin", """
        [confide.participants]
        echo = fake_plugin:echo_relay
    """)
    install("two-plugin", """
        [confide.participants]
        echo = fake_plugin:no_model
    """)
    with pytest.raises(plugins.PluginError, match=r"'echo' is declared twice.*uninstall one"):
        plugins.load(plugins.PARTICIPANTS, "echo")


def test_a_participant_plugin_fills_a_seat_by_its_name(install: Install) -> None:
    install("agent-plugin", """
        [confide.participants]
        example-echo = fake_plugin:echo_relay
    """)
    spec = get_benchmark("demo")
    capture = run_once(spec, spec.load_tasks(None, None)[0], "example-echo,scripted,example-echo")
    assert capture.result is not None
    first = next(e.message for e in capture.trace.events if e.kind == "message")
    assert first.text == "ada heard 0 message(s) from nobody in round 0"
    assert [r["participant"] for r in capture.result.rows] == [
        "example-echo", "scripted", "example-echo"
    ]


def test_a_model_plugin_is_a_provider(install: Install) -> None:
    with pytest.raises(ModelSpecError, match="unknown provider 'example'"):
        parse_spec("example/parrot")
    install("model-plugin", """
        [confide.models]
        example = fake_plugin:make_model
        junk = fake_plugin:no_model
    """)
    assert parse_spec("example/parrot").provider == "example"
    model = get_model("example/parrot")
    reply = asyncio.run(model.generate(
        [ChatMessage(role="user", content="hello\nworld")], config=GenerateConfig()
    ))
    assert (reply.model, reply.text) == ("example/parrot", "parrot: world")
    assert model.meter.total().calls == 1  # wrapped like a builtin provider
    with pytest.raises(ModelSpecError, match="unknown model"):
        get_model("example/nope")
    with pytest.raises(ModelSpecError, match="factory returned a str, not a ChatModel"):
        get_model("junk/x")
    listing = CliRunner().invoke(app, ["models", "list"])
    builtin = "openai, openai-api, anthropic, google, mock, local, replay"
    assert f"providers: {builtin}, example, junk" in listing.stdout
