"""A model engine in a child process, so that a native crash fails one call, not the run.

llama.cpp is native code: a segfault, an abort (a failed GGML_ASSERT) or the kernel's
out-of-memory killer ends the process it runs in. The engine therefore lives in a worker
process; the caller sends each request over a socket pair and waits for the reply. When
the worker dies, the pending call raises `ModelCrashError` naming the signal or exit
code, the episode that made it is recorded as an error, and the next call starts a new
worker (the model is loaded again and its prefix cache starts empty). A worker found
dead between calls is replaced silently: no call was lost.

A plain subprocess, not `multiprocessing`: its spawn and forkserver contexts import the
parent's `__main__` again in the child (which breaks scripts without a `__main__` guard),
and fork is unsafe once the event loop's threads exist. The child gets the parent's
`sys.path`, as spawn gives it, so the engine factory, pickled by reference, imports
there as it does here. Messages are pickles framed by `multiprocessing.connection`:

    parent -> child                 child -> parent
    (factory, kwargs)               ("ready",) | ("error", text)    once, at start
    (messages, config)              ("ok", response) | ("error", text)   per call

The child ignores SIGINT (Ctrl-C is the parent's to handle) and exits, freeing the
engine, as soon as its end of the pair reads EOF, so it outlives its parent by at most
the call in flight. The parent side closes each child through `weakref.finalize`: when
the worker drops it, and at interpreter exit for those still running (close the pair,
wait a grace period, then SIGKILL), so no worker is left behind.

POSIX only (file-descriptor passing, signal names).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any, Protocol

from confide.llm.errors import ModelCrashError, ModelError
from confide.llm.types import GenerateConfig

STOP_GRACE_S = 5.0
_BOOTSTRAP = (
    "import sys; sys.path[:] = sys.argv[2:]; "
    "from confide.llm.providers.local_worker import serve; serve(int(sys.argv[1]))"
)


class Engine(Protocol):
    """What a worker runs: an OpenAI-style chat completion, and a way to free it."""

    def complete(
        self, messages: Sequence[dict[str, Any]], config: GenerateConfig
    ) -> dict[str, Any]: ...

    def close(self) -> None: ...


EngineFactory = Callable[..., Engine]


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def serve(fd: int) -> None:
    """The worker's main loop: build the engine, then answer requests until EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(fd)
    try:
        factory, kwargs = conn.recv()
        engine = factory(**kwargs)
    except EOFError:
        return
    except Exception as exc:
        conn.send(("error", _describe(exc)))
        return
    try:
        conn.send(("ready",))
        while True:
            messages, config = conn.recv()
            try:
                reply: tuple[str, Any] = ("ok", engine.complete(messages, config))
            except Exception as exc:
                reply = ("error", _describe(exc))
            conn.send(reply)
    except (EOFError, OSError):  # the parent closed its end, or is gone
        return
    finally:
        engine.close()


def _stop(proc: subprocess.Popen[bytes], conn: Connection) -> None:
    """Close the pair (the child exits on EOF), reap it, SIGKILL it after the grace."""
    conn.close()
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def death_cause(returncode: int) -> str:
    """`SIGSEGV`, `SIGKILL`... for a process killed by a signal, else `exit code N`."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class _Child:
    """One running worker process and the parent's end of its socket pair."""

    def __init__(self) -> None:
        conn, child_end = Pipe()
        fd = child_end.fileno()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP, str(fd), *sys.path],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        child_end.close()
        self.conn = conn
        self.stop = weakref.finalize(self, _stop, self.proc, conn)

    def exchange(self, message: Any) -> Any:
        """Send `message` and return the reply; EOFError or OSError when the process
        is gone."""
        self.conn.send(message)
        return self.conn.recv()


class LocalWorker:
    """An engine in a worker process; calls run one at a time (llama.cpp is not
    thread-safe), and a dead process is replaced on the next call."""

    def __init__(self, factory: EngineFactory, kwargs: Mapping[str, Any], model: str) -> None:
        self.factory = factory
        self.kwargs = dict(kwargs)
        self.model = model
        self._lock = threading.Lock()
        self._child: _Child | None = None

    def __repr__(self) -> str:
        return f"LocalWorker(model={self.model!r}, pid={self.pid})"

    @property
    def pid(self) -> int | None:
        """The running worker process, if any."""
        child = self._child
        return child.proc.pid if child is not None and child.proc.poll() is None else None

    def complete(
        self, messages: Sequence[dict[str, Any]], config: GenerateConfig
    ) -> dict[str, Any]:
        """The engine's response; blocks, so call it from a thread."""
        with self._lock:
            child = self._running()
            try:
                status, payload = child.exchange((list(messages), config))
            except (EOFError, OSError):
                raise self._crashed(child, "during the call") from None
        if status == "error":
            raise ModelError(payload, model=self.model, kind="bad_request")
        response: dict[str, Any] = payload
        return response

    def close(self) -> None:
        """Stop the worker process (a later call starts a new one)."""
        with self._lock:
            if self._child is not None:
                self._child.stop()
                self._child = None

    def _running(self) -> _Child:
        """The live child, starting one (and waiting for its engine) when needed."""
        if self._child is not None:
            if self._child.proc.poll() is None:
                return self._child
            self._child.stop()
            self._child = None
        child = _Child()
        try:
            reply = child.exchange((self.factory, self.kwargs))
        except (EOFError, OSError):
            raise self._crashed(child, "while loading the model") from None
        if reply[0] == "error":
            child.stop()
            raise ModelError(
                f"the local model failed to load: {reply[1]}", model=self.model, kind="config"
            )
        self._child = child
        return child

    def _crashed(self, child: _Child, when: str) -> ModelCrashError:
        """The error for a child that died; it is reaped and forgotten."""
        child.stop()
        if self._child is child:
            self._child = None
        cause = death_cause(child.proc.returncode)
        return ModelCrashError(
            f"local model worker died with {cause} {when} (pid {child.proc.pid}); "
            "the next call starts a new one",
            model=self.model,
            cause=cause,
        )


_shared_lock = threading.Lock()
_shared: dict[tuple[EngineFactory, tuple[tuple[str, Any], ...]], LocalWorker] = {}


def shared_worker(factory: EngineFactory, kwargs: Mapping[str, Any], model: str) -> LocalWorker:
    """The process-wide worker for this engine and these settings: one loaded model per
    settings, shared by every agent and episode (its prefix cache serves them all)."""
    key = (factory, tuple(sorted(kwargs.items())))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = LocalWorker(factory, kwargs, model)
        return _shared[key]
