"""CalBench: multi-agent calendar scheduling under private information (calbench.md)."""
