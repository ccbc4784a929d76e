"""CalBench: multi-agent calendar scheduling under private information (the CalBench paper).

Registers `SPEC` (benchmark id `calbench`): suites `canonical` (section 4.1, default) and
`tiny`, or `--tasks FILE` (our JSONL or the public fixture format); reference lineups
`imap` (D.1), `sdmap` (D.2), `dsm-welfare` and `dsm-private` (D.3), all four compared when
no lineup is given (the Table 2 run); the three communication conditions of A.3; per-seat rows
and per-game metrics of section 4.2; the Table 2 analogue as the summary table. Each
episode is followed by the judge (when a `judge` role is bound) and adds the leaderboard
columns to its rows (audits/episode.py); the run directory gets the privacy and audit
tables (outputs/privacy.py, outputs/audits.py).
"""

from confide.declaration import lazy_spec

__getattr__ = lazy_spec(__name__)
