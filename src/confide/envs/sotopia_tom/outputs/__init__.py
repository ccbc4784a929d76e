"""Sotopia-ToM tables beyond the per-run summary: `agreement` (judge reliability, Table 6)."""
