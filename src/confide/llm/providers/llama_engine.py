"""The llama.cpp engine behind `local/<model>`: one Llama instance and its prefix cache.

It runs inside the local model's worker process (see `local_worker`); the benchmark of
the worker (bench/local_worker.py) also calls it in-process as its baseline.

With `config.response_schema`, decoding is constrained by a grammar compiled from the
schema (llama-cpp-python's JSON-schema converter), so the reply is valid JSON unless it
is cut off by `max_tokens`. The converter's string-character rule admits raw control
characters (a newline inside a string, which strict JSON parsers reject); we tighten it
to the JSON definition (no U+0000-U+001F, as upstream llama.cpp does) before compiling.
A cut-off reply comes back with `finish_reason="length"` and is a normal invalid reply
for the structured-output repair loop. Without `max_tokens` the engine stops after 512
tokens (a 135M model can ramble until the context is full).

Prompt processing dominates on CPU. The shipped weights are Q4_1, which llama.cpp's
fast matrix kernels (llamafile sgemm) do not cover; so the worker dequantizes them once
at load to F16 (llama.cpp's own quantizer, into a temporary file read into memory and
deleted at once; the F16 values are the Q4_1 ones up to F16 rounding). CPU seconds on
these 2-core machines, one thread, at load 10-12 (2026-12-07): a 2,227-token first
prompt 19.6 s in Q4_1, 14.7 s in F16; the next call of the same thread (157 new prompt
tokens, 93 generated under the reply grammar at a 2,400-token context) 3.8 s and 3.7 s.
Flash attention made the second kind 40% slower (5.3 s) and stays off.
`dequantize=False` runs the shipped Q4_1 file as it is.

Agents keep one growing thread each, and several agents share one instance, so the
instance keeps a RAM cache of model states keyed by token prefix (llama-cpp-python's
`LlamaRAMCache`): a call resumes from the cached state with the longest common prefix
and processes only the new tokens, whichever agent spoke last (`cache_mb`; 0 turns it
off). The cache holds the model's own state, so replies are those of a full
recomputation up to floating-point batch effects; runs stay deterministic for a fixed
call order.

Threads (`n_threads`, for both generation and prompt processing): by default the cores
not busy with other work when the engine loads (the core count less the one-minute load
average, at least one). llama.cpp's worker threads spin while they wait for each other,
so a thread on a busy core slows every other: on an idle 2-core machine two threads are
~1.6-1.9x faster than one (prompt 85 -> 162 tokens/s, generation 41 -> 61 tokens/s),
on 2 busy cores they were 2-5x slower. The count does not change replies: llama.cpp
splits each matrix product by output rows, each dot product summed by one thread, so
one and two threads give bit-identical logits (tested), and a run stays reproducible
whatever the load was when its worker started.

Greedy calls with a reply schema sample through `llama_sampling` (the grammar checked on
the argmax first, the same tokens for a third less CPU), whose saved states also leave
out llama-cpp-python's unused logits rows. Loading dequantizes in about 1 s of CPU.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from typing import Any, cast

from confide.llm.types import GenerateConfig

DEFAULT_MAX_TOKENS = 512

# The converter's character rule, and the same rule without control characters.
_LOOSE_CHAR = r'char ::= [^"\\] |'
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'


def json_gbnf(schema: dict[str, Any]) -> str:
    """GBNF text accepting the JSON texts valid against `schema` (strict strings)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf: str = json_schema_to_gbnf(json.dumps(schema))
    return gbnf.replace(_LOOSE_CHAR, _JSON_CHAR)


def json_grammar(schema: dict[str, Any]) -> Any:
    """The compiled llama.cpp grammar of `json_gbnf(schema)`."""
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(json_gbnf(schema), verbose=False)


def free_cores() -> int:
    """The cores not busy with other work: the core count less the one-minute load
    average (module docstring), at least one."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return cores
    return max(1, min(cores, round(cores - load)))


def f16_copy(path: str, folder: str) -> str:
    """`path`'s weights dequantized to F16 in `folder` (module docstring)."""
    import ctypes

    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_F16
    params.allow_requantize = True
    params.nthread = 1
    out = os.path.join(folder, "weights-f16.gguf")
    with suppress_stdout_stderr(disable=False):  # the quantizer logs every tensor
        failed = llama_cpp.llama_model_quantize(path.encode(), out.encode(),
                                                ctypes.byref(params))
    if failed:
        raise RuntimeError(f"llama.cpp could not dequantize {path} to F16 (code {failed})")
    return out


class LlamaEngine:
    """A GGUF chat model loaded by llama.cpp, answering OpenAI-style chat requests."""

    def __init__(
        self, *, path: str, n_ctx: int, n_threads: int | None, cache_mb: int,
        dequantize: bool = True,
    ) -> None:
        from confide.llm.providers.llama_sampling import GreedyGrammarLlama

        threads = n_threads or free_cores()
        with tempfile.TemporaryDirectory(prefix="confide-local-") as folder:
            self.llama = GreedyGrammarLlama(
                model_path=f16_copy(path, folder) if dequantize else path,
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                use_mmap=not dequantize,  # read whole, so the copy can go at once
                seed=0,
                verbose=False,
            )
        if cache_mb > 0:
            from llama_cpp.llama_cache import LlamaRAMCache

            self.llama.set_cache(LlamaRAMCache(capacity_bytes=cache_mb << 20))

    def complete(
        self, messages: Sequence[dict[str, Any]], config: GenerateConfig
    ) -> dict[str, Any]:
        """llama-cpp-python's chat completion (an OpenAI-style response dict)."""
        kwargs: dict[str, Any] = {
            "messages": list(messages),
            "temperature": config.temperature,
            "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
            "stop": list(config.stop) or None,
        }
        if config.seed is not None:
            kwargs["seed"] = config.seed
        if config.top_p is not None:  # llama.cpp has no reasoning effort: that is ignored
            kwargs["top_p"] = config.top_p
        if config.response_schema is not None:
            kwargs["grammar"] = json_grammar(config.response_schema)
        if config.logprobs:
            kwargs["logprobs"] = True
        # not streamed, so the response is one dict
        return cast("dict[str, Any]", self.llama.create_chat_completion(**kwargs))

    def close(self) -> None:
        """Free the model while the interpreter is still whole (llama-cpp-python's own
        finalizer fails noisily once module globals are torn down at exit)."""
        self.llama.close()
