"""Incognita outputs: trajectory reader, failure types, design and the paper's figures and
tables (the Incognita paper, sections 4-6 and appendix B), read against the coordination
reference the environment keeps (`envs/incognita/reference.py`, `golden.py`: 4.1).

Modules (import them directly; nothing is re-exported, so importing the environment never
pulls in matplotlib):

- `reader`: the model-free reader of the three coordination processes (4.2);
- `failures`: the five failure types and the per-trial counts (4.3, 6.2-6.3);
- `design`: the Latin-square schedule and the experiment file (5);
- `trials`, `tables`, `figures`, `write`: per-trial rows, Figures 2-3 and Tables 1-2 as
  CSV and PNG in a run directory (6, B.1, B.3).
"""
