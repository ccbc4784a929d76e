"""The resume guarantee pinned from mutation-testing survivors (bench/mutation.py): a paid
call answered before a failure, a stop or a kill is never sent again, and a journal is
never read by another configuration nor left unreadable by a damaged or planted file."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from confide.llm import ChatMessage, Completion, GenerateConfig
from confide.llm.types import Usage
from confide.runner.journal import EpisodeJournal, drop_finished, journaled, pays

ASK = [ChatMessage(role="user", content="hi")]
SPEC = "openai-api/x"


def _completion(text: str, **fields: Any) -> Completion:
    return Completion(model=SPEC, text=text, **fields)


def _journal_with(directory: Path, fingerprint: dict[str, str], *texts: str) -> Path:
    journal = EpisodeJournal.open(directory, "ep", fingerprint)
    for number, text in enumerate(texts):
        journal.append(f"k{number}", _completion(text))
    journal.close()
    return journal.path


def _texts(journal: EpisodeJournal, count: int) -> list[str | None]:
    taken = [journal.take(f"k{number}") for number in range(count)]
    return [c.text if c is not None else None for c in taken]


@pytest.fixture
def no_umask() -> Iterator[None]:
    old = os.umask(0)
    yield None
    os.umask(old)


def test_a_journal_in_the_documented_format_is_replayed(tmp_path: Path) -> None:
    """A journal a killed run left (name, header and lines as the module docstring gives
    them, written out by hand) is found and replayed by the next run: an upgrade that
    reads it differently would pay for every answered call again."""
    fingerprint = {"seed": "1", "model": "café"}
    name = "ep.1f6e77911530c540.jsonl"  # sha256 of {"model": "café", "seed": "1"}, 16 hex
    header = {"journal": 1, "episode_id": "ep", "fingerprint": fingerprint}
    entry = {"key": "k0", "completion": {"model": SPEC, "text": "paid for"}}
    (tmp_path / name).write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    journal = EpisodeJournal.open(tmp_path, "ep", dict(reversed(fingerprint.items())))
    assert journal.path.name == name
    assert _texts(journal, 1) == ["paid for"]


def test_a_fingerprint_names_one_journal_whatever_its_key_order(tmp_path: Path) -> None:
    _journal_with(tmp_path, {"a": "1", "b": "2"}, "answered")
    again = EpisodeJournal.open(tmp_path, "ep", {"b": "2", "a": "1"})
    assert _texts(again, 1) == ["answered"]


def test_a_damaged_line_ends_what_is_replayed_and_the_next_answer_follows_it(
    tmp_path: Path,
) -> None:
    """Whatever a damaged line holds (not JSON, JSON of another shape, no key, an answer
    that does not validate), reading stops there without an error; the next attempt
    cuts the file back to its readable part, so the answer it appends is read back."""
    damaged = [
        b'{"key": "k1", "compl\n',  # torn, then a newline: not JSON
        b"[1, 2]\n",  # JSON, not an object
        b'{"completion": {"model": "m", "text": "x"}}\n',  # no key
        b'{"key": "k1", "completion": {"text": 3}}\n',  # not a completion
    ]
    for number, bad in enumerate(damaged):
        directory = tmp_path / str(number)
        path = _journal_with(directory, {}, "first", "second")
        lines = path.read_bytes().splitlines(keepends=True)  # header, k0, k1
        path.write_bytes(lines[0] + lines[1] + bad + lines[2])
        journal = EpisodeJournal.open(directory, "ep", {})
        assert len(journal) == 1 and _texts(journal, 2) == ["first", None], bad
        journal.append("k1", _completion("paid again"))
        journal.close()
        assert _texts(EpisodeJournal.open(directory, "ep", {}), 2) == ["first", "paid again"]


def test_another_configurations_file_under_this_name_is_started_over(tmp_path: Path) -> None:
    path = _journal_with(tmp_path, {"seed": "2"}, "theirs")
    mine = EpisodeJournal.open(tmp_path, "ep", {"seed": "1"})
    path.rename(mine.path)  # another configuration's answers under this one's name
    assert len(EpisodeJournal.open(tmp_path, "ep", {"seed": "1"})) == 0
    mine = EpisodeJournal.open(tmp_path, "ep", {"seed": "1"})
    mine.append("k0", _completion("mine"))
    mine.close()
    again = EpisodeJournal.open(tmp_path, "ep", {"seed": "1"})
    assert _texts(again, 1) == ["mine"]
    assert json.loads(mine.path.read_text().splitlines()[0])["fingerprint"] == {"seed": "1"}


def test_a_planted_link_is_neither_read_nor_written_through(tmp_path: Path) -> None:
    victim = _journal_with(tmp_path / "elsewhere", {}, "planted")
    before = victim.read_bytes()
    journal = EpisodeJournal.open(tmp_path / "journal", "ep", {})
    journal.path.parent.mkdir()
    journal.path.symlink_to(victim)
    journal = EpisodeJournal.open(tmp_path / "journal", "ep", {})
    assert len(journal) == 0 and journal.take("k0") is None
    journal.append("k0", _completion("mine"))
    journal.close()
    assert victim.read_bytes() == before and not journal.path.is_symlink()
    assert _texts(EpisodeJournal.open(tmp_path / "journal", "ep", {}), 1) == ["mine"]


def test_the_journal_makes_its_folder_however_deep(tmp_path: Path) -> None:
    journal = EpisodeJournal.open(tmp_path / "a" / "b" / "journal", "ep", {})
    journal.append("k0", _completion("x"))
    journal.close()
    assert _texts(EpisodeJournal.open(tmp_path / "a" / "b" / "journal", "ep", {}), 1) == ["x"]


def test_the_journal_file_is_readable_by_all_and_writable_by_its_owner_only(
    tmp_path: Path, no_umask: None
) -> None:
    path = _journal_with(tmp_path, {}, "x")
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_journal_that_cannot_start_raises_and_keeps_no_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk when the file is started: the error reaches the episode (it fails and
    resumes later), and no file descriptor is left open (a long run retrying episodes
    on a full disk would otherwise run out of them)."""

    def full(fd: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    journal = EpisodeJournal.open(tmp_path, "ep", {})
    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "ftruncate", full)
    with pytest.raises(OSError, match="No space"):
        journal.append("k0", _completion("x"))
    assert len(os.listdir("/proc/self/fd")) == before


def test_an_episode_that_ends_ok_without_a_paid_call_settles_cleanly(tmp_path: Path) -> None:
    journal = EpisodeJournal.open(tmp_path, "ep", {})
    journal.settle(ok=True)  # nothing was journaled: no file to remove
    assert not journal.path.exists()


def test_the_journals_of_finished_episodes_with_dotted_ids_are_removed(tmp_path: Path) -> None:
    for episode in ("t.1__lineup__r0", "t.2__lineup__r0"):
        journal = EpisodeJournal.open(tmp_path, episode, {"seed": "1"})
        journal.append("k0", _completion("x"))
        journal.close()
    drop_finished(tmp_path, {"t.1__lineup__r0"})
    assert [p.name.split("__")[0] for p in tmp_path.iterdir()] == ["t.2"]


class _Paid:
    """A model that charges for every call and says how long it took."""

    name = SPEC

    def __init__(self, cached: bool = False) -> None:
        self.calls = 0
        self.cached = cached

    async def generate(self, messages: Any, *, config: GenerateConfig) -> Completion:
        self.calls += 1
        return _completion(
            f"answer {self.calls}",
            usage=Usage(prompt_tokens=100, completion_tokens=10),
            latency_s=7.5,
            cached=self.cached,
        )


async def test_a_replayed_answer_keeps_its_usage_and_reports_its_own_latency(
    tmp_path: Path,
) -> None:
    inner = _Paid()
    model = journaled(SPEC, inner)
    journal = EpisodeJournal.open(tmp_path, "ep", {})
    with journal.scope():
        paid = await model.generate(ASK, config=GenerateConfig())
    journal.close()
    again = EpisodeJournal.open(tmp_path, "ep", {})
    with again.scope():
        replayed = await model.generate(ASK, config=GenerateConfig())
    assert inner.calls == 1
    assert replayed.usage == paid.usage and replayed.cached and not paid.cached
    assert 0.0 <= replayed.latency_s < 0.5  # this lookup's time, not the paid call's 7.5 s


async def test_an_answer_from_the_response_cache_is_not_journaled(tmp_path: Path) -> None:
    """A `--cache` hit is already on disk and cost nothing now: journaling it would mark
    it paid-for on replay and grow the journal for nothing."""
    model = journaled(SPEC, _Paid(cached=True))
    journal = EpisodeJournal.open(tmp_path, "ep", {})
    with journal.scope():
        await model.generate(ASK, config=GenerateConfig())
    journal.close()
    assert not journal.path.exists()


def test_only_models_that_cost_something_are_journaled() -> None:
    assert [pays(s) for s in (None, "mock/echo", " replay/run ", "openai-api/x")] == [
        False,
        False,
        False,
        True,
    ]
