"""Benchmark environments; each subpackage exposes one BenchmarkSpec named SPEC."""
