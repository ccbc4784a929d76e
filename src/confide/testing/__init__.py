"""Conformance checks shipped with the library: every registered environment must pass
`check_env` (no leaks, same seed same trace). `confide.testing.json_server` is the HTTP
plumbing of the local fake providers the tests and benches run against."""

from confide.testing.conformance import ConformanceError, check_env, run_once

__all__ = ["ConformanceError", "check_env", "run_once"]
