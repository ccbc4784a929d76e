"""Sotopia-ToM's own commands, `confide scenarios` and `confide judge` (declared in
`declaration.py`)."""
