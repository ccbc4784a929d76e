"""The progress line shows the spend on any terminal width, and a run without the bar
prints it at the end."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from confide.llm import UsageMeter
from confide.llm.types import Completion, Usage
from confide.runner.progress import RunProgress


def _meter() -> UsageMeter:
    meter = UsageMeter()
    meter.record(Completion(model="openai-api/x", text="ok", usage=Usage(
        prompt_tokens=1200, completion_tokens=300, cached_prompt_tokens=1000,
        reasoning_tokens=100, cost_usd=0.0123)))
    meter.record_retry("openai-api/x")
    return meter


@pytest.mark.parametrize("width", [30, 80, 200])
def test_the_spend_is_shown_whole_at_any_width(width: int) -> None:
    progress = RunProgress(3, 0, _meter(), enabled=True)
    console = Console(width=width, record=True, file=io.StringIO())
    for part in progress._progress.get_renderables():
        console.print(part)
    shown = " ".join(console.export_text().split())
    for piece in ("calls 1", "retries 1", "tokens in 1200", "cached 1000", "out 300",
                  "reasoning 100", "$0.0123"):
        assert piece in shown, (width, piece, shown)


def test_without_the_bar_the_spend_is_printed_at_the_end(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with RunProgress(3, 0, _meter(), enabled=False) as bar:
        bar.advance(True)
    err = capsys.readouterr().err
    assert "spend: calls 1, retries 1; tokens in 1200 (cached 1000" in err
    assert "cost $0.0123" in err


def test_a_run_without_model_calls_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with RunProgress(3, 0, UsageMeter(), enabled=False) as bar:
        bar.advance(True)
    assert capsys.readouterr().err == ""


def test_the_bar_and_the_spend_line_name_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    """Runs in a row (`confide eval`) each print a spend line: each says whose it is."""
    progress = RunProgress(3, 0, _meter(), enabled=True, label="sotopia-tom")
    console = Console(width=200, record=True, file=io.StringIO())
    for part in progress._progress.get_renderables():
        console.print(part)
    assert "sotopia-tom episodes" in console.export_text()
    with RunProgress(3, 0, _meter(), enabled=False, label="calbench") as bar:
        bar.advance(True)
    assert capsys.readouterr().err.startswith("calbench spend: calls 1, retries 1;")
