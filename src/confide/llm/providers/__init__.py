"""Chat-model providers; `confide.llm.factory.get_model` picks one by spec and imports it
lazily, so an optional provider's missing extra only matters when it is used."""
