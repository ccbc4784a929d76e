"""Incognita: retail customer service under three access structures (incognita.md)."""
