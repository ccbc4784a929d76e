"""The viewer's data and site (no browser): who saw what, leak markers, pages, bundle."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from confide.core.trace import MessageDelivered, ScoringStart, find_trace, read_trace
from confide.core.trace_view import visible
from confide.errors import ConfideError
from confide.view import Site, serve_in_thread, write_bundle
from confide.view.glossary import glossary_for


def load(site: Site, path: str) -> dict[str, Any]:
    body = site.get(path)[0].decode()
    start, end = body.index("(") + 1, body.rindex(")")
    value: dict[str, Any] = json.loads(body[start:end])
    return value


def first_episode(site: Site, run: int = 0) -> dict[str, Any]:
    episode_id = site.runs[run].rows[0]["episode_id"]
    return load(site, f"data/episodes/{run}/{episode_id}.js")


def test_seen_is_the_delivery_rule_of_trace_show_as(tiny_runs: dict[str, Path]) -> None:
    site = Site([tiny_runs["calbench"]])
    episode = first_episode(site)
    trace = read_trace(tiny_runs["calbench"] / "traces" / f"{episode['id']}.jsonl.gz")
    for event, shown in zip(trace.events, episode["events"], strict=True):
        assert shown["seen"] == [p for p in episode["participants"] if visible(event, p)]
    dms = [e for e in trace.events
           if isinstance(e, MessageDelivered) and e.message.channel.kind == "dm"]
    assert dms, "the dm condition delivers direct messages"
    outsider = {p for p in episode["participants"]} - {dms[0].message.sender,
                                                       *dms[0].message.recipients}
    assert outsider  # three agents, a DM between two: the third never sees it


@pytest.mark.parametrize(("benchmark", "metric"), [
    ("calbench", "VPS"), ("sotopia-tom", "CPV"), ("incognita", "gate_releases"),
])
def test_leak_markers_point_at_the_causing_message(
    tiny_runs: dict[str, Path], benchmark: str, metric: str
) -> None:
    site = Site([tiny_runs[benchmark]])
    episode = first_episode(site)
    markers = [m for m in episode["markers"] if m["metric"] == metric]
    assert markers
    for marker in markers:
        assert episode["events"][marker["event"]]["kind"] == "message"
    summary = load(site, "data/index.js")["runs"][0]
    table = summary["episodes"]
    leaks = table["columns"].index("leak_events")
    assert any(int(r[leaks]) > 0 for r in table["rows"])


def test_private_state_is_the_benchmarks_private_markers(tiny_runs: dict[str, Path]) -> None:
    site = Site([tiny_runs["sotopia-tom"]])
    episode = first_episode(site)
    assert all(episode["private"][p]["items"] for p in episode["participants"])


def test_big_seeds_survive_javascript(tiny_runs: dict[str, Path]) -> None:
    episode = first_episode(Site([tiny_runs["calbench"]]))
    assert episode["header"]["seed"] == Site([tiny_runs["calbench"]]).runs[0].rows[0]["seed"]


def test_unknown_pages_and_episodes_are_refused(tiny_runs: dict[str, Path]) -> None:
    site = Site([tiny_runs["calbench"]])
    for path in ("../results.csv", "data/episodes/0/nope.js", "data/episodes/7/x.js",
                 "data/episodes/0/..%2Fresults.js"):
        with pytest.raises(ConfideError):
            site.get(path)
    with pytest.raises(ConfideError, match="not a run directory"):
        Site([tiny_runs["calbench"] / "traces"])


def test_server_serves_index_on_localhost(tiny_runs: dict[str, Path]) -> None:
    server, url = serve_in_thread([tiny_runs["calbench"], tiny_runs["incognita"]])
    try:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url) as response:
            assert b"app.js" in response.read()
        with urllib.request.urlopen(url + "data/index.js") as response:
            assert response.read().startswith(b"confideIndex(")
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(url + "data/episodes/0/missing.js")
    finally:
        server.shutdown()
        server.server_close()


def test_bundle_writes_every_page_and_episode(tiny_runs: dict[str, Path], tmp_path: Path) -> None:
    site = Site([tiny_runs["calbench"]])
    bundle = write_bundle([tiny_runs["calbench"]], tmp_path / "b")
    written = sorted(p.relative_to(tmp_path / "b").as_posix()
                     for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert written == sorted([*site.paths(), ".confide-bundle"])
    assert (bundle.files, bundle.skipped) == (len(written), {})
    episodes = {r["episode_id"] for r in site.runs[0].rows}
    assert len([p for p in written if p.startswith("data/episodes/")]) == len(episodes)


def test_glossary_defines_every_headline_column(tiny_runs: dict[str, Path]) -> None:
    for benchmark in ("calbench", "sotopia-tom", "incognita"):  # demo has no paper
        summary = (tiny_runs[benchmark] / "summary.csv").read_text(encoding="utf-8")
        header = summary.splitlines()[0].split(",")
        known = set(glossary_for(benchmark))
        undefined = [c for c in header if c not in known and c not in _LABEL_COLUMNS]
        assert not undefined, (benchmark, undefined)


_LABEL_COLUMNS = {"Setting", "Method", "Condition", "model", "strategy", "episodes",
                  "participant", "condition"}


def test_incognita_desk_data_is_what_each_desk_held(incognita_social: Path) -> None:
    from confide.envs.incognita import events as ev

    site = Site([incognita_social])
    episode = first_episode(site)
    trace = read_trace(find_trace(incognita_social / "traces", episode["id"]))
    setup = trace.of(ev.EpisodeSetup)[0]
    assert trace.of(ScoringStart)  # judged scoring marks its start; the reader must accept it
    private = episode["private"]
    roles = {n: (private[n]["desk"] or {}).get("role") for n in private}
    assert roles["USER"] == "customer" and roles["AGENT"] == "agent"
    desks = {n for n, role in roles.items() if role not in (None, "agent", "customer")}
    # every desk that took part, with the role the setup gave it
    assert desks == set(setup.data.desk_roles) & set(episode["participants"])
    assert len(desks) >= 5
    for desk in desks:
        assert private[desk]["desk"]["role"] == setup.data.desk_roles[desk]
    executed = trace.of(ev.ToolExecuted)
    assert executed, "the social condition's cancellation runs a tool at one desk"
    for name, view in private.items():
        desk = view["desk"] or {"calls": [], "releases": []}
        mine = [e for e in executed if e.seat == name]
        assert [c["tool"] for c in desk["calls"]] == [e.data.tool for e in mine]
        for call in desk["calls"]:  # each call links to a record only that desk saw
            assert episode["events"][call["event"]]["seen"] == [name]
        releases = [e.data.field for e in trace.of(ev.GateRelease) if e.seat == name]
        assert [r["field"] for r in desk["releases"]] == releases
    owner = executed[0].seat
    assert set(private[owner]["desk"]["tools"]) >= {executed[0].data.tool}


def test_received_items_are_the_first_visible_events_carrying_them(
    incognita_social: Path,
) -> None:
    site = Site([incognita_social])
    episode = first_episode(site)
    customer_items = episode["private"]["USER"]["items"]
    assert customer_items
    for name, view in episode["private"].items():
        for item in customer_items if name != "USER" else []:
            carrying = [e["i"] for e in episode["events"]
                        if e["kind"] == "message" and name in e["seen"]
                        and item.casefold() in (e["text"] or "").casefold()]
            got = [r["event"] for r in view["received"] if r["item"] == item]
            assert got == carrying[:1], (name, item)
    # the customer told the agent its reasons; no desk heard them in this episode
    assert {r["item"] for r in episode["private"]["AGENT"]["received"]} == set(customer_items)
