"""The viewer and report in a real headless Chromium (Must show).

Debian's /usr/bin/chromium is driven by playwright with `executable_path` (playwright's
own browser download needs the network). Screenshots of every page go to
build/screenshots/ (override with CONFIDE_SCREENSHOTS), which CI keeps as artifacts.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from confide.core.trace import trace_text
from confide.report import build_report
from confide.view import Site, serve_in_thread, write_bundle

pytestmark = pytest.mark.browser

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS = Path(os.environ.get("CONFIDE_SCREENSHOTS",
                            Path(__file__).resolve().parents[2] / "build" / "screenshots"))


class Browser:
    """One page with its console errors recorded, and a screenshot helper."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.evaluate("window.scrollTo(0, 0)")  # the sticky header stays on top
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser(chromium: Any) -> Iterator[Browser]:
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    b = Browser(page)
    yield b
    page.close()
    assert b.errors == [], "console errors"


@pytest.fixture(scope="module")
def served(tiny_runs: dict[str, Path], incognita_social: Path) -> Iterator[str]:
    server, url = serve_in_thread(
        [*(tiny_runs[b] for b in ("calbench", "sotopia-tom", "incognita", "demo")),
         incognita_social]
    )
    yield url + "index.html"
    server.shutdown()
    server.server_close()


def _dm_roles(site: Site, episode_id: str) -> tuple[int, str, str]:
    """(message id, an outsider, its recipient) of the episode's first DM."""
    body = site.get(f"data/episodes/0/{episode_id}.js")[0].decode()
    episode = json.loads(body[body.index("(") + 1: body.rindex(")")])
    dm = next(e for e in episode["events"] if e["kind"] == "message" and e["channel"] == "dm")
    outsider = next(p for p in episode["participants"]
                    if p not in (dm["sender"], *dm["recipients"]))
    return dm["id"], outsider, dm["recipients"][0]


def _calbench_flow(b: Browser, base: str, site: Site, prefix: str) -> None:
    page = b.page
    page.goto(base + "#/")
    page.wait_for_selector("section.run")
    b.shot(f"{prefix}runs")
    page.goto(base + "#/episodes?run=0")
    page.select_option("select[name=lineup]", "imap")
    page.wait_for_function("location.hash.includes('lineup=imap')")
    lineups = page.locator("table.episodes tbody tr td:nth-child(3)").all_inner_texts()
    assert lineups and set(lineups) == {"imap"}
    b.shot(f"{prefix}episodes")
    page.locator("a.episode-link").first.click()
    page.wait_for_selector("#perspective")
    episode_id = page.evaluate("decodeURIComponent(location.hash.split('/')[3].split('?')[0])")
    message, outsider, recipient = _dm_roles(site, episode_id)
    dm = f".event[data-message='{message}']"
    page.select_option("#perspective", outsider)
    page.wait_for_function(f"location.hash.includes('as={outsider}')")
    page.wait_for_selector("#perspective")
    assert page.locator(dm).count() == 0
    page.select_option("#perspective", recipient)
    page.wait_for_function(f"location.hash.includes('as={recipient}')")
    page.wait_for_selector(dm)
    assert page.locator(".private li").count() > 0
    b.shot(f"{prefix}episode-perspective")
    page.select_option("#perspective", "")
    page.wait_for_function("!location.hash.includes('as=')")
    _click_first_marker(b, "VPS", f"{prefix}calbench-vps-marker")


def _click_first_marker(b: Browser, metric: str, shot: str) -> None:
    page = b.page
    link = page.locator("a.leak-link", has_text=metric).first
    event = link.get_attribute("data-event")
    link.click()
    page.wait_for_selector(f"#ev-{event}.highlight")
    assert page.locator(f"#ev-{event}").get_attribute("data-kind") == "message"
    b.shot(shot)


def test_calbench_filter_open_perspective_and_vps_marker(
    browser: Browser, served: str, tiny_runs: dict[str, Path]
) -> None:
    _calbench_flow(browser, served, Site([tiny_runs["calbench"]]), "served-")


@pytest.mark.parametrize(("run", "metric"), [(1, "CPV"), (2, "gate_releases")])
def test_sotopia_cpv_and_incognita_gate_release_markers(
    browser: Browser, served: str, run: int, metric: str
) -> None:
    page = browser.page
    page.goto(served + f"#/episodes?run={run}&leaked=1")
    page.locator("a.episode-link").first.click()
    page.wait_for_selector("#perspective")
    _click_first_marker(browser, metric, f"served-marker-{metric}")


def test_model_call_opens_and_glossary_lists_metrics(browser: Browser, served: str) -> None:
    page = browser.page
    page.goto(served + "#/episodes?run=3")
    page.locator("a.episode-link").first.click()
    page.select_option("#perspective", "")
    call = page.locator(".call-details").first
    call.locator("summary").click()
    facts = call.locator("p.note").inner_text()
    assert "tokens" in facts and "latency" in facts and "cache" in facts
    call.locator("pre").nth(1).wait_for()  # loaded from the episode's details file on open
    assert call.locator("pre").count() >= 2  # the prompt's messages and the completion
    browser.shot("served-model-call")
    page.goto(served + "#/glossary")
    page.wait_for_selector("table")
    assert page.locator("tbody tr").count() > 30
    browser.shot("served-glossary")


def test_bundle_from_file_url_passes_the_same_flow(
    browser: Browser, tiny_runs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    write_bundle([tiny_runs["calbench"]], out)
    moved = tmp_path / "moved"
    shutil.move(out, moved)  # nothing in the bundle depends on where it was written
    _calbench_flow(browser, (moved / "index.html").as_uri(), Site([tiny_runs["calbench"]]),
                   "bundle-")


def test_report_with_planted_payloads_runs_no_script(
    browser: Browser, planted_run: Path, tmp_path: Path
) -> None:
    report = build_report(planted_run, tmp_path / "report.html")
    browser.page.goto(report.as_uri())
    browser.page.wait_for_load_state("load")
    assert browser.dialogs == []
    assert browser.page.locator("img[src=x]").count() == 0
    assert browser.page.locator("script").count() == 0
    browser.shot("report-xss")


def test_viewer_shows_planted_markup_as_text(
    browser: Browser, tiny_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = tmp_path / "demo"
    shutil.copytree(tiny_runs["demo"], run)
    payload = '<img src=x onerror=alert(1)><script>alert(2)</script>'
    trace = next((run / "traces").glob("*.jsonl.gz"))
    lines = trace_text(trace).splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event["kind"] == "message":
            event["message"]["text"] = payload
            lines[i] = json.dumps(event)
            break
    trace.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    server, url = serve_in_thread([run])
    try:
        page = browser.page
        page.goto(url + f"index.html#/episode/0/{trace.name.removesuffix('.jsonl.gz')}")
        page.wait_for_selector(".event.message")
        assert page.locator(".event.message .text").first.inner_text() == payload
        assert page.locator("main img").count() == 0 and browser.dialogs == []
    finally:
        server.shutdown()
        server.server_close()


def test_incognita_desk_perspective_shows_its_calls_and_who_saw_what(
    browser: Browser, served: str, incognita_social: Path
) -> None:
    from confide.core.trace import find_trace, read_trace
    from confide.envs.incognita.events import ToolExecuted

    site = Site([incognita_social])
    episode_id = site.runs[0].rows[0]["episode_id"]
    trace = read_trace(find_trace(incognita_social / "traces", episode_id))
    desk = trace.of(ToolExecuted)[0].seat
    assert desk is not None
    page = browser.page
    page.goto(served + f"#/episode/4/{episode_id}")
    page.wait_for_selector(".who-saw-what")
    # the customer's private items: the agent saw them, the desk did not
    header = [t.strip() for t in page.locator(".who-saw-what th").all_inner_texts()]
    rows = page.locator(".who-saw-what tbody tr")
    assert rows.count() > 0
    cells = rows.first.locator("td")
    assert cells.nth(header.index("AGENT")).inner_text() == "saw"
    assert cells.nth(header.index(desk)).inner_text() == ""
    page.select_option("#perspective", desk)
    page.wait_for_selector(".desk-calls")
    assert "cancel_pending_order" in page.locator(".desk-calls").inner_text()
    assert page.locator(".private h3").first.inner_text().startswith("Desk data (role ")
    link = page.locator(".desk-calls a").first
    event = link.get_attribute("data-event")
    link.click()
    page.wait_for_selector(f"#ev-{event}.highlight")
    assert page.locator(f"#ev-{event}").get_attribute("data-name") == "tool_executed"
    browser.shot("served-incognita-desk")
    page.select_option("#perspective", "USER")
    page.wait_for_selector(".desk-releases")
    assert "released" in page.locator(".desk-releases").inner_text()
    assert browser.errors == []


def test_several_runs_are_compared_in_one_table(browser: Browser, served: str) -> None:
    page = browser.page
    page.goto(served)
    page.wait_for_selector("#compare")
    assert page.locator("section.run").count() == 5
    assert page.locator("#compare h3").all_inner_texts() == [
        "calbench (1 run)", "sotopia-tom (1 run)", "incognita (2 runs)", "demo (1 run)"]
    incognita = page.locator("#compare table").nth(2)
    # both Incognita runs in one table, one row each, under the same columns
    assert [c.strip() for c in incognita.locator("th").all_inner_texts()][:3] == [
        "run", "participant", "condition"]
    rows = [[c.strip() for c in r.locator("td").all_inner_texts()]
            for r in incognita.locator("tbody tr").all()]
    assert [(r[0], r[2]) for r in rows] == [("incognita", "direct"),
                                           ("incognita-social0", "social")]
    browser.shot("served-compare-runs")
    assert browser.errors == []


def test_episodes_are_paged_200_at_a_time(
    browser: Browser, tiny_runs: dict[str, Path], tmp_path: Path
) -> None:
    import csv

    run = tmp_path / "big"
    shutil.copytree(tiny_runs["calbench"], run)
    with (run / "results.csv").open(newline="", encoding="utf-8") as handle:
        template = next(csv.DictReader(handle))
    rows = [{**template, "episode_id": f"ep{i:03d}"} for i in range(450)]
    with (run / "results.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(template))
        writer.writeheader()
        writer.writerows(rows)
    server, url = serve_in_thread([run])
    try:
        page = browser.page
        page.goto(url + "index.html#/episodes?run=0")
        page.wait_for_selector("a.episode-link")
        assert page.locator("a.episode-link").count() == 200
        assert "page 1 of 3" in page.locator(".pager").inner_text()
        page.locator(".pager a.next").click()
        page.wait_for_selector("text=page 2 of 3")
        assert page.locator("a.episode-link").first.inner_text() == "ep200"
        page.locator(".pager a.next").click()
        page.wait_for_selector("text=page 3 of 3")
        assert page.locator("a.episode-link").count() == 50
        assert page.locator(".pager a.next").count() == 0
        page.select_option("select[name=seat]", template["seat"])  # a filter starts over
        page.wait_for_selector("text=page 1 of 3")
        assert browser.errors == []
    finally:
        server.shutdown()
        server.server_close()


def test_largest_main_job_episode_renders_in_under_a_second(
    browser: Browser, calbench_largest: Path
) -> None:
    """From following the link to the calendars and the transcript drawn, with
    the server building the episode's document (tasks warmed, as `confide view` does while
    the runs page is read)."""
    import time
    import urllib.request

    episode_id = Site([calbench_largest]).runs[0].rows[0]["episode_id"]
    server, url = serve_in_thread([calbench_largest])
    try:
        urllib.request.urlopen(url + f"data/episodes/0/{episode_id}.js").read()  # warm tasks
        page = browser.page
        page.goto(url + "index.html#/episodes")
        page.wait_for_selector("a.episode-link")
        timings = []
        for _ in range(2):
            page.goto(url + "index.html#/episodes")
            page.wait_for_selector("a.episode-link")
            start = time.perf_counter()
            page.locator("a.episode-link").first.click()
            page.wait_for_selector("#story-0 table.grid")
            page.wait_for_selector("#transcript .event")
            timings.append(time.perf_counter() - start)
        assert min(timings) < 1.0, timings
        # the calendars: a starting grid and one per round, agents as rows, slots as columns
        grids = page.locator("#story-0 table.grid")
        assert grids.count() > 5
        assert page.locator("#story-0 td.tone-now").count() > 0
        assert page.locator("#story-1 tbody tr").count() == grids.count() - 1  # a row a meeting
        assert page.locator("#story-2 table.grid tbody tr").count() > 5  # VPS pairs
        # protocol messages in words, bookkeeping folded away until ticked
        assert page.locator(".event .sentence").first.inner_text().startswith("SDMAP: ")
        assert page.locator(".event[data-name='turn_start']").count() == 0
        who = page.locator("details.who-saw-what")
        assert who.count() == 1 and who.get_attribute("open") is None
        browser.shot("served-calbench-largest")
    finally:
        server.shutdown()
        server.server_close()


def test_event_kind_filter_shows_and_hides_kinds(
    browser: Browser, served: str, tiny_runs: dict[str, Path]
) -> None:
    episode_id = Site([tiny_runs["calbench"]]).runs[0].rows[0]["episode_id"]
    page = browser.page
    page.goto(served + f"#/episode/0/{episode_id}")
    page.wait_for_selector("#transcript .event")
    assert page.locator(".event[data-name='turn_start']").count() == 0
    box = page.locator("input[name=kind][value=turn_start]")
    assert not box.is_checked()
    box.check()
    page.wait_for_selector(".event[data-name='turn_start']")
    messages = page.locator(".event.message").count()
    page.locator("input[name=kind][value=message]").uncheck()
    page.wait_for_function("document.querySelectorAll('.event.message').length === 0")
    assert messages > 0 and page.locator(".event[data-name='turn_start']").count() > 0
    # another benchmark: its own kinds, none folded
    page.goto(served + "#/episodes?run=1")
    page.locator("a.episode-link").first.click()
    page.wait_for_selector("input[name=kind][value=judge_verdict]")
    assert all(b.is_checked() for b in page.locator("input[name=kind]").all())


def test_a_new_page_starts_at_its_top(browser: Browser, served: str) -> None:
    page = browser.page
    page.goto(served + "#/episodes?run=0")
    page.wait_for_selector("a.episode-link")
    page.evaluate("document.body.style.minHeight = '5000px'; window.scrollTo(0, 2000)")
    assert page.evaluate("window.scrollY") > 1000
    page.locator("nav a", has_text="Glossary").click()
    page.wait_for_selector("span.section")
    assert page.evaluate("window.scrollY") == 0
    page.evaluate("window.scrollTo(0, 1500)")
    page.locator("nav a", has_text="Episodes").click()
    page.wait_for_selector("a.episode-link")
    assert page.evaluate("window.scrollY") == 0


def test_glossary_prints_sections_as_written(browser: Browser, served: str) -> None:
    page = browser.page
    page.goto(served + "#/glossary")
    page.wait_for_selector("span.section")
    sections = page.locator("span.section").all_inner_texts()
    assert "§4.1" in sections and "§3.2, §F.3" in sections and "Table 2" in sections
    assert all(s.startswith(("§", "Table ")) and not s.endswith("00") for s in sections)


def test_run_cards_show_their_whole_headline_table(browser: Browser, served: str) -> None:
    page = browser.page
    page.goto(served)
    page.wait_for_selector("section.run table")
    for card in page.locator("section.run").all():
        fits = card.locator("table").first.evaluate(
            "t => t.scrollWidth <= t.clientWidth + 1 && "
            "t.getBoundingClientRect().right <= t.closest('section').getBoundingClientRect().right")
        assert fits, card.locator("h2").inner_text()


def test_judge_verdict_citations_link_to_the_turns_they_cite(browser: Browser, served: str) -> None:
    page = browser.page
    page.goto(served + "#/episodes?run=1")
    page.locator("a.episode-link").first.click()
    page.select_option("#perspective", "")  # the judge's records are bookkeeping
    verdict = page.locator(".event[data-name='judge_verdict']").first
    verdict.locator("summary").click()
    cite = verdict.locator("a.cite").first
    cite.wait_for()
    label, event = cite.inner_text(), cite.get_attribute("data-event")
    assert label.startswith("R")
    cite.click()
    page.wait_for_selector(f"#ev-{event}.highlight")
    assert page.locator(f"#ev-{event}").get_attribute("data-utterance") == label
    assert page.locator(f"#ev-{event} .utterance").inner_text().strip() == label
    browser.shot("served-verdict-citation")


def test_usage_panel_counts_the_runs_model_calls(
    browser: Browser, served: str, tiny_runs: dict[str, Path]
) -> None:
    from confide.view.usage import run_usage

    expected = run_usage(tiny_runs["demo"])["total"]["calls"]
    page = browser.page
    page.goto(served)
    card = page.locator("section.run[data-run='3']")
    card.locator("details.usage summary").click()
    card.locator("table.usage-table").wait_for()
    row = card.locator("table.usage-table tbody tr").first.locator("td").all_inner_texts()
    assert expected > 0 and row[1] == f"{expected:,}"
    browser.shot("served-usage-panel")


def test_run_card_columns_keep_one_precision(browser: Browser, served: str) -> None:
    page = browser.page
    page.goto(served)
    table = page.locator("section.run[data-run='0'] table").first
    table.wait_for()
    rows = [r.locator("td").all_inner_texts() for r in table.locator("tbody tr").all()]
    numeric = [i for i, th in enumerate(table.locator("th").all())
               if "num" in (th.get_attribute("class") or "")]
    assert len(rows) >= 2 and numeric  # one precision across rows needs two rows at least
    for i in numeric:
        decimals = {len(r[i].split(".")[1]) if "." in r[i] else 0 for r in rows if r[i]}
        assert len(decimals) == 1, (i, [r[i] for r in rows])
