"""confide: benchmarks for coordination and privacy of LLM agents under distributed
knowledge and authority (CalBench, Sotopia-ToM, Incognita) on one shared runtime."""

__version__ = "0.1.0"
