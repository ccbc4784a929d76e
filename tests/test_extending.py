"""docs/extending.md, step by step: each test does what one section of the walk-through
says and checks what it promises, without touching confide's own files.

- a benchmark: the example plugin's `rendezvous`, installed by its real entry points,
  is listed by `confide benchmarks`, defines its columns in the glossary, gets its
  headline figure and its report section in report.html, and shows in the viewer;
- a participant: a `py:` seat plays it;
- a provider: one `Provider` row registered from outside `confide.llm` serves a model seat
  end to end;
- a metric: a column computed by the benchmark and declared in its glossary reaches
  summary.csv, the report's definitions and the viewer's glossary.
"""

from __future__ import annotations

import asyncio
import csv
import json
import re
import textwrap
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide import plugins
from confide.cli.main import app
from confide.core.trace import ModelCall, read_trace
from confide.llm import ChatMessage, Completion, GenerateConfig, Usage
from confide.llm.registry import Provider, register_provider, unregister_provider
from confide.report.figures import headline_figures
from confide.report.html import build_report
from confide.view.glossary import glossary_for, glossary_json
from confide.view.site import Site

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "confide-example-plugin"

Install = Callable[[str, dict[str, dict[str, str]]], None]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """`install(dist, {group: {name: target}})`: a distribution with those entry points,
    its modules importable from the example package and from tmp_path (what `pip install`
    leaves behind, as importlib.metadata reads it)."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.syspath_prepend(str(tmp_path))

    def _install(name: str, groups: dict[str, dict[str, str]]) -> None:
        info = tmp_path / f"{name.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
        )
        lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
                 for group, points in groups.items()]
        (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
        plugins.refresh()

    yield _install
    plugins.refresh()


@pytest.fixture
def example(install: Install) -> None:
    """The example plugin with the entry points its pyproject.toml declares."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    install("confide-example-plugin", project["project"]["entry-points"])


def _run(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "run"
    done = CliRunner().invoke(app, ["run", *args, "--out", str(out), "--no-progress"])
    assert done.exit_code == 0, done.output
    return out


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# ---- adding a benchmark ------------------------------------------------------------------


@pytest.mark.usefixtures("example")
def test_a_benchmark_is_listed_from_its_declaration_alone() -> None:
    listing = CliRunner().invoke(app, ["benchmarks"])
    assert listing.exit_code == 0, listing.output
    row = next(line for line in listing.stdout.splitlines() if "rendezvous" in line)
    assert "earliest, open" in row and "default" in row
    # listing imported the declaration, not the benchmark
    import sys

    assert "confide_example.declaration" in sys.modules


@pytest.mark.usefixtures("example")
def test_a_benchmark_declares_its_glossary() -> None:
    terms = glossary_for("rendezvous")
    assert list(terms) == ["success", "disclosure", "offers", "episodes", "agreed", "day"]
    assert terms["disclosure"].name == "Disclosure"
    viewer = [t for t in glossary_json() if t["benchmark"] == "rendezvous"]
    assert [t["column"] for t in viewer] == list(terms)


@pytest.mark.usefixtures("example")
def test_a_benchmark_declares_its_headline_figure() -> None:
    rows = [{"participant": "earliest", "episodes": "3", "success": "0.5", "disclosure": "0.25"},
            {"participant": "open", "episodes": "3", "success": "0.5", "disclosure": "1.0"}]
    [(title, svg)] = headline_figures("rendezvous", rows)
    assert title == "Rendezvous: success and disclosure per participant"
    text = svg.decode()
    assert ">earliest<" in text and ">open<" in text
    assert len(re.findall(r"<rect [^>]*fill=", text)) >= 4  # two metrics x two participants
    assert headline_figures("rendezvous", [{"participant": "x"}]) == []  # no columns, none


@pytest.mark.usefixtures("example")
def test_a_benchmark_run_has_its_report_and_viewer(tmp_path: Path) -> None:
    out = _run(tmp_path, "rendezvous")
    meetings = _csv(out / "meetings.csv")
    assert sorted((m["task"], m["lineup"], m["day"]) for m in meetings) == sorted(
        (task, lineup, day) for lineup in ("earliest", "open")
        for task, day in (("pair", "3"), ("trio", "2"), ("apart", ""))
    )
    html = build_report(out).read_text(encoding="utf-8")
    assert "Rendezvous: success and disclosure per participant" in html
    assert "data:image/svg+xml;base64," in html
    assert "Meeting day per episode" in html  # the sections its view hooks declare
    assert "Results per episode and seat" in html
    assert "<dt>disclosure</dt>" in html and "Share of a seat&#39;s free days" in html
    site = Site([out])
    index = json.loads(site.get("data/index.js")[0].decode().split("(", 1)[1].rsplit(")", 1)[0])
    [run] = index["runs"]
    assert run["benchmark"] == "rendezvous"
    assert {t["column"] for t in index["glossary"] if t["benchmark"] == "rendezvous"} >= {
        "success", "disclosure"}
    episode_id = _csv(out / "results.csv")[0]["episode_id"]
    assert site.get(f"data/episodes/0/{episode_id}.js")[0]


COMMAND = '''
from dataclasses import replace

from confide.declaration import Command
from confide_example.declaration import DECLARATION as BASE


def days(task: str = "pair") -> None:
    """Rendezvous only: print a task's free days per seat."""
    from confide_example.rendezvous import load_tasks

    [found] = [t for t in load_tasks("default", None) if t.id == task]
    for seat, free in found.free.items():
        print(seat, *free)


DECLARATION = replace(BASE, spec="confide_example.rendezvous:SPEC", commands=(
    Command("rendezvous-days", "command_plugin:days", "Rendezvous only: print a task's free "
            "days per seat."),))
'''


def test_a_benchmark_declares_its_own_command(install: Install, tmp_path: Path) -> None:
    (tmp_path / "command_plugin.py").write_text(textwrap.dedent(COMMAND), encoding="utf-8")
    install("command-plugin", {"confide.benchmarks": {"rendezvous": "command_plugin:DECLARATION"}})
    done = CliRunner().invoke(app, ["rendezvous-days", "--task", "trio"])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == ["ada 2 5 6", "ben 0 2 5", "cy 1 2 5"]
    described = CliRunner().invoke(app, ["benchmarks", "rendezvous"])
    assert "confide rendezvous-days" in described.stdout
    unknown = CliRunner().invoke(app, ["rendezvous-dayz"])
    assert unknown.exit_code == 2 and "Did you mean 'rendezvous-days'?" in unknown.output


# ---- adding a participant ----------------------------------------------------------------

AGENT = '''
from confide_example.rendezvous import RendezvousAction


class Latest:
    """Offers its latest free day, every turn."""

    def __init__(self, name):
        self.name = name

    async def act(self, observation):
        return RendezvousAction(days=observation.free_days[-1:])


def latest(seat, ctx):
    return Latest(seat)
'''


@pytest.mark.usefixtures("example")
def test_a_participant_is_one_factory(tmp_path: Path) -> None:
    (tmp_path / "my_agents.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    out = _run(tmp_path, "rendezvous", "--lineup", "py:my_agents:latest")
    results = _csv(out / "results.csv")
    days = {r["task_id"]: r["day"] for r in results}
    # pair: ada offers 4, ben 3, no common day in three rounds; trio: 6, 5, 5 -> none
    assert days == {"pair": "", "trio": "", "apart": ""}
    assert {r["disclosure"] for r in results if r["seat"] == "ada" and r["task_id"] == "pair"} \
        == {str(1 / 3)}


# ---- adding a provider -------------------------------------------------------------------


class ShoutModel:
    """A ChatModel: answers with the last message upper-cased."""

    def __init__(self, name: str) -> None:
        self.name = f"shout/{name}"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        text = messages[-1].content.upper()[:40]
        return Completion(model=self.name, text=text, finish_reason="stop",
                          usage=Usage(prompt_tokens=len(messages), completion_tokens=1))


@pytest.fixture
def shout() -> Iterator[Provider]:
    provider = register_provider(Provider(name="shout", factory=ShoutModel, about="test"))
    yield provider
    unregister_provider("shout")


@pytest.mark.usefixtures("shout")
def test_a_provider_is_one_registered_row(tmp_path: Path) -> None:
    from confide.llm import get_model

    reply = asyncio.run(get_model("shout/loud").generate(
        [ChatMessage(role="user", content="hi")], config=GenerateConfig()))
    assert reply.text == "HI"
    out = _run(tmp_path, "demo", "--lineup", "shout/loud", "--suite", "default")
    rows = _csv(out / "results.csv")
    assert rows and {r["status"] for r in rows} == {"ok"}
    calls = [e for path in sorted((out / "traces").iterdir())
             for e in read_trace(path).events if isinstance(e, ModelCall)]
    assert calls and {(c.model, c.error) for c in calls} == {("shout/loud", None)}
    models = CliRunner().invoke(app, ["models", "list"])
    assert "shout" in models.stdout


# ---- adding a metric ---------------------------------------------------------------------

METRIC = '''
from dataclasses import replace

from confide.declaration import Term
from confide_example import rendezvous
from confide_example.declaration import DECLARATION as BASE


def summarize(rows):
    """The example's summary plus `turns`: mean turns per episode of each participant."""
    table = rendezvous.summarize(rows)
    for line in table:
        mine = {r["episode_id"]: float(r["turns"]) for r in rows
                if str(r["participant"]) == line["participant"] and r.get("status", "ok") == "ok"}
        line["turns"] = sum(mine.values()) / len(mine)
    return table


SPEC = replace(rendezvous.SPEC, summarize=summarize)
DECLARATION = replace(
    BASE, spec="metric_plugin:SPEC",
    glossary=(*BASE.glossary, Term("turns", "Turns", "Mean turns per episode.", "")),
)
'''


def test_a_metric_is_computed_summarized_and_declared(install: Install, tmp_path: Path) -> None:
    (tmp_path / "metric_plugin.py").write_text(textwrap.dedent(METRIC), encoding="utf-8")
    install("metric-plugin", {"confide.benchmarks": {"rendezvous": "metric_plugin:DECLARATION"}})
    out = _run(tmp_path, "rendezvous", "--lineup", "open")
    [summary] = _csv(out / "summary.csv")
    # open: pair agrees on day 3 at turn 2, trio on day 2 at turn 3, apart runs 2 x 2 turns
    assert float(summary["turns"]) == pytest.approx((2 + 3 + 4) / 3)
    html = build_report(out).read_text(encoding="utf-8")
    assert "<dt>turns</dt>" in html and "Mean turns per episode." in html
    assert glossary_for("rendezvous")["turns"].name == "Turns"
