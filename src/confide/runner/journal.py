"""The call journal: every answered model call of an episode, on disk as it arrives, so an
episode that fails or is stopped resumes without paying for those calls again (a transport
failure that outlasted the retries once discarded 29 answered calls of a Sotopia-ToM
episode, and the resume paid for them again).

Each episode that calls a model has one append-only file in the run directory,
`journal/<episode id>.<configuration key>.jsonl`: a header line (episode id and resume
fingerprint), then one line per answered call, `{"key": ..., "completion": ...}`, where
the key is the hash of the request (model spec, messages, config: `llm.request`). A line
is written with one `write` on a file opened for appending and fsynced before the call
returns, so a kill at any moment loses at most the call in flight; a torn last line (power
loss) is dropped when the file is read back. The configuration key is a hash of the
episode's fingerprint (`runner.fingerprint`), so another configuration never reads these
answers: it has a file of its own, and the header is checked too.

When the episode is played again (a resume after an error, a stop or a kill), each request
whose key the journal holds is answered from it, identical requests in recorded order
(`llm.providers.replay.RecordedAnswers`), without a provider call; the first request it
does not hold, and every one after, goes to the provider as usual and is journaled in
turn. A replayed completion keeps the usage of the call that paid for it and is marked
`cached`, so the trace and the spend read from it count the call once. An episode that
finishes `ok` removes its journal (its trace then holds every call); a failed one keeps it
for the next resume.

Only calls that cost something are journaled: a `mock/` or `replay/` model answers from
the request alone, at no cost, and is simply asked again. Cache hits (`--cache`) are
already on disk. The episode's journal is found through a context variable set for the
episode's task (`scope`), as the repair attempt is (`llm.recorder.attempt_scope`), so the
run's shared models need no per-episode copy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import time
from collections.abc import Container, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from pydantic import ValidationError

from confide.llm.providers.replay import RecordedAnswers
from confide.llm.recorder import bounded
from confide.llm.request import request_key
from confide.llm.types import ChatMessage, ChatModel, Completion, GenerateConfig
from confide.redaction import scrub_json_line

JOURNAL_DIR = "journal"
"""The journals' folder in a run directory."""
JOURNAL_VERSION = 1
FREE_PROVIDERS = frozenset({"mock", "replay"})
"""Providers whose answers cost nothing and follow from the request: never journaled."""
SUFFIX = ".jsonl"

_CURRENT: ContextVar[EpisodeJournal | None] = ContextVar("confide_journal", default=None)


def configuration_key(fingerprint: Mapping[str, str]) -> str:
    """A short hash of an episode's fingerprint: what its journal file is named by."""
    text = json.dumps(dict(fingerprint), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def journal_path(directory: Path, episode_id: str, fingerprint: Mapping[str, str]) -> Path:
    """Where the journal of `episode_id` under `fingerprint` lives."""
    return directory / f"{episode_id}.{configuration_key(fingerprint)}{SUFFIX}"


class EpisodeJournal:
    """One episode's journal: the answers recorded by earlier attempts, and the file new
    answers are appended to (created with the first one)."""

    def __init__(self, path: Path, episode_id: str, fingerprint: Mapping[str, str]) -> None:
        self.path = path
        self._header = {
            "journal": JOURNAL_VERSION, "episode_id": episode_id, "fingerprint": dict(fingerprint),
        }
        self._completions, self._good_bytes = self._read()
        self._answers = RecordedAnswers(key for key, _ in self._completions)
        self.replayed = 0
        """Calls answered from the journal in this attempt."""
        self._fd: int | None = None
        self._lock = threading.Lock()

    @classmethod
    def open(
        cls, directory: Path, episode_id: str, fingerprint: Mapping[str, str]
    ) -> EpisodeJournal:
        """The journal of `episode_id` under `fingerprint` in `directory` (a run's
        `journal/`), with what earlier attempts recorded."""
        return cls(journal_path(directory, episode_id, fingerprint), episode_id, fingerprint)

    def __len__(self) -> int:
        """Answers recorded by earlier attempts."""
        return len(self._completions)

    def _read(self) -> tuple[list[tuple[str, Completion]], int]:
        """The recorded (key, completion) pairs and the length of the file's readable part
        (0: none, the file is rewritten from its header). Reading stops at the first line
        that does not parse (a torn last write)."""
        if self.path.is_symlink():
            return [], 0  # never read through a planted link (`_start` replaces it)
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return [], 0
        entries: list[tuple[str, Completion]] = []
        good = 0
        with handle:
            for number, line in enumerate(handle):
                if not line.endswith(b"\n"):
                    break  # a torn last write: no line follows it
                try:
                    data = json.loads(line)
                    if number == 0:
                        if data != self._header:
                            return [], 0  # not this episode's configuration: start over
                    else:
                        entries.append(
                            (str(data["key"]), Completion.model_validate(data["completion"]))
                        )
                except (ValueError, KeyError, TypeError, ValidationError):
                    break
                good += len(line)
        return entries, good

    def take(self, key: str) -> Completion | None:
        """The recorded answer to the request `key`, if an earlier attempt has one left."""
        index = self._answers.take(key)
        if index is None:
            return None
        self.replayed += 1
        return self._completions[index][1]

    def append(self, key: str, completion: Completion) -> None:
        """Record one answered call, durably (blocking: call it off the event loop)."""
        entry = {"key": key, "completion": completion.model_dump(mode="json")}
        line = scrub_json_line(json.dumps(entry, ensure_ascii=False)) + "\n"
        with self._lock:
            if self._fd is None:
                self._fd = self._start()
            data = memoryview(line.encode())
            while data:  # a regular file takes it in one write but for a full disk
                data = data[os.write(self._fd, data):]
            os.fsync(self._fd)

    def _start(self) -> int:
        """The file opened for appending: its readable part kept (a torn tail cut off),
        or a new file with the header."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_symlink():
            self.path.unlink()
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.path, flags | os.O_CLOEXEC, 0o644)
        try:
            os.ftruncate(fd, self._good_bytes)
            if self._good_bytes == 0:  # the header holds hashes and settings, no secret
                os.write(fd, json.dumps(self._header, ensure_ascii=False).encode() + b"\n")
            os.fsync(fd)
            _sync_directory(self.path.parent)
        except OSError:
            os.close(fd)
            raise
        return fd

    def close(self) -> None:
        """Close the file (it stays for the next attempt)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def settle(self, ok: bool) -> None:
        """Close; when the episode finished `ok` (its trace is complete), remove the file."""
        self.close()
        if ok:
            self.path.unlink(missing_ok=True)

    @contextmanager
    def scope(self) -> Iterator[None]:
        """Make this the journal of the calls of every task created inside the block."""
        token = _CURRENT.set(self)
        try:
            yield
        finally:
            _CURRENT.reset(token)


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class JournaledModel:
    """Answers a request from the current episode's journal when it holds it, else asks
    `inner` and journals the answer (module docstring). Outside an episode's `scope` it
    only passes calls through."""

    def __init__(self, inner: ChatModel, spec: str) -> None:
        self.name = inner.name
        self.inner = inner
        self.spec = spec

    def __repr__(self) -> str:
        return f"JournaledModel({self.inner!r})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        journal = _CURRENT.get()
        if journal is None:
            return await self.inner.generate(messages, config=config)
        start = time.perf_counter()
        key = request_key(messages, config, self.spec)
        answer = journal.take(key)
        if answer is not None:
            latency = time.perf_counter() - start
            return answer.model_copy(update={"cached": True, "latency_s": latency})
        completion = bounded(await self.inner.generate(messages, config=config))
        if not completion.cached:
            await asyncio.to_thread(journal.append, key, completion)
        return completion


def pays(spec: str | None) -> bool:
    """Whether calls to the model `spec` (None: no model) are journaled: its provider is
    not one of the `FREE_PROVIDERS`."""
    return spec is not None and spec.strip().partition("/")[0] not in FREE_PROVIDERS


def journaled(spec: str, model: ChatModel) -> ChatModel:
    """`model` (the run's model for `spec`) with its calls journaled, unless its provider
    answers for free (`FREE_PROVIDERS`)."""
    return JournaledModel(model, spec) if pays(spec) else model


def drop_finished(directory: Path, finished: Container[str]) -> None:
    """Remove the journals of episodes that are complete (`finished`: their ids): left by
    a run killed between writing an episode's trace and removing its journal."""
    if not directory.is_dir():
        return
    for path in directory.iterdir():
        episode = path.name.rsplit(".", 2)[0]
        if path.name.endswith(SUFFIX) and episode in finished and not path.is_symlink():
            path.unlink(missing_ok=True)
