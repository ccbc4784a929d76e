"""Chat-model providers, one `Provider` row each in `confide.llm.registry.BUILTIN`.
Factories are named lazily there, so listing providers imports no SDK and an optional
provider's missing extra only matters when it is used."""
