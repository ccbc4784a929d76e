"""Greedy decoding under a grammar, checking the grammar on one token instead of all.

llama-cpp-python's sampler chain applies the grammar to the whole vocabulary (49,152
tokens for SmolLM2) before every greedy pick: 9 ms of CPU a token on these machines,
40% on top of the model's own 22 ms (2026-12-07). At temperature 0 the pick is the
highest-logit token the grammar allows, so llama.cpp's own sampler
(`common_sampler_sample` in its `common/sampling.cpp`) first takes the raw argmax and
asks the grammar about that one token; only when the grammar rejects it is the whole
vocabulary masked and the argmax taken again. The token is the same either way (ties go
to the lowest id, as llama.cpp's greedy sampler breaks them), so replies are unchanged,
token for token; other sampling (temperature > 0, penalties, logits processors) keeps
the chain.

`GreedyGrammarLlama` is `llama_cpp.Llama` with that sampler in place of the chain's
when a call is greedy, has a grammar and nothing else in the chain would act.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp.llama import LlamaState
from llama_cpp.llama_grammar import LlamaGrammar

_TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


class GreedyGrammarSampler:
    """The greedy pick among the tokens a grammar allows (module docstring); a
    stand-in for llama-cpp-python's `LlamaSampler` in `Llama.sample`."""

    def __init__(self, model: Any, grammar: LlamaGrammar) -> None:
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(model.vocab))
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:
            raise ValueError("llama.cpp rejected the grammar")
        self.every = np.zeros(self.n_vocab, dtype=_TOKEN_DATA)
        self.every["id"] = np.arange(self.n_vocab, dtype=np.intc)

    def __del__(self) -> None:
        grammar = getattr(self, "grammar", None)
        if grammar:
            llama_cpp.llama_sampler_free(grammar)

    def allows(self, token: int) -> bool:
        """Whether the grammar, in its current state, admits `token` next."""
        one = llama_cpp.llama_token_data(token, 0.0, 0.0)
        candidates = llama_cpp.llama_token_data_array(
            ctypes.pointer(one), 1, -1, False
        )
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(candidates))
        return not math.isinf(one.logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """The next token for the logits at output `idx`; the grammar accepts it."""
        pointer = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))
        token = int(np.argmax(logits))
        if not self.allows(token):
            every = self.every
            every["logit"] = logits
            candidates = llama_cpp.llama_token_data_array(
                every.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)),
                self.n_vocab, -1, False,
            )
            llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(candidates))
            token = int(np.argmax(every["logit"]))
        llama_cpp.llama_sampler_accept(self.grammar, token)
        return token


class GreedyGrammarLlama(llama_cpp.Llama):
    """`llama_cpp.Llama` whose greedy grammar calls use `GreedyGrammarSampler`, and
    whose saved states (the prefix cache's entries) leave out the logits rows.

    Without `logits_all` llama-cpp-python never fills its `scores` rows (sampling reads
    llama.cpp's own logits), yet `save_state` copies all `n_batch` of them (512 x
    49,152 floats, 100 MB, uncounted by the cache's capacity) and `load_state` writes
    them back: a quarter of a second of CPU per call for nothing. The two swap in an
    empty `scores` while they run, so a state holds llama.cpp's state alone.
    """

    def save_state(self) -> LlamaState:
        if self._logits_all:
            return super().save_state()
        scores, self.scores = self.scores, self.scores[:0]
        try:
            return super().save_state()
        finally:
            self.scores = scores

    def load_state(self, state: LlamaState) -> None:
        if self._logits_all:
            super().load_state(state)
            return
        scores, self.scores = self.scores, self.scores[:0]
        try:
            super().load_state(state)
        finally:
            self.scores = scores

    def _init_sampler(self, **kwargs: Any) -> Any:  # type: ignore[override]
        grammar = kwargs.get("grammar")
        neutral = (
            kwargs.get("repeat_penalty", 1.0) == 1.0
            and kwargs.get("frequency_penalty", 0.0) == 0.0
            and kwargs.get("presence_penalty", 0.0) == 0.0
            and kwargs.get("logits_processor") is None
        )
        if grammar is not None and kwargs.get("temp") == 0.0 and neutral:
            return GreedyGrammarSampler(self._model, grammar)
        return super()._init_sampler(**kwargs)
