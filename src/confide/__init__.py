"""confide: benchmarks for coordination and privacy of LLM agents under distributed
knowledge and authority (CalBench, Sotopia-ToM, Incognita) on one shared runtime."""

import importlib

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """`confide.evaluate` (callable: `confide.evaluate(model, ...)`), imported on first
    use, so importing confide stays cheap and its layers are loaded only when asked for."""
    if name == "evaluate":
        return importlib.import_module("confide.evaluate")
    raise AttributeError(f"module 'confide' has no attribute {name!r}")
