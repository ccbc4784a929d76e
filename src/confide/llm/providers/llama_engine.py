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

Prompt processing dominates on CPU (~80-160 prompt tokens/s for the 135M model on these
2-core machines, so a 1,800-token first prompt costs 12-23 s). Agents keep one growing
thread each, and several agents share one instance, so the instance keeps a RAM cache
of model states keyed by token prefix (llama-cpp-python's `LlamaRAMCache`): a call
resumes from the cached state with the longest common prefix and processes only the new
tokens, whichever agent spoke last (`cache_mb`; 0 turns it off). The cache holds the
model's own state, so replies are those of a full recomputation up to floating-point
batch effects; runs stay deterministic for a fixed call order.

Threads (`n_threads`, for both generation and prompt processing): every core by
default, which on an otherwise idle 2-core machine is ~1.6-1.9x faster than one (prompt
85 -> 162 tokens/s, generation 41 -> 61 tokens/s). llama.cpp's worker threads spin while
they wait for each other, so on a machine whose cores are busy with other work, set
`n_threads` to the cores actually free (measured 2-5x slower prompts with every core on
2 busy cores).
"""

from __future__ import annotations

import json
import os
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


class LlamaEngine:
    """A GGUF chat model loaded by llama.cpp, answering OpenAI-style chat requests."""

    def __init__(self, *, path: str, n_ctx: int, n_threads: int | None, cache_mb: int) -> None:
        import llama_cpp

        threads = n_threads or os.cpu_count() or 1
        self.llama = llama_cpp.Llama(
            model_path=path,
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
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
