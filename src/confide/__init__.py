"""confide: benchmarks for coordination and privacy of LLM agents under distributed
knowledge and authority (CalBench, Sotopia-ToM, Incognita) on one shared runtime."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """`confide.evaluate`, imported on first use (importing confide stays cheap)."""
    if name == "evaluate":
        import confide.evaluate

        return confide.evaluate
    raise AttributeError(f"module 'confide' has no attribute {name!r}")
