"""CalBench trace audits, pure functions of (scenario, trace): semantic-context leakage,
own-slot disclosure (G.5), the appendix G analyses (G.1-G.4), the leaderboard columns
(D.4) with the per-episode wrapper that adds them and the judge (episode.py), and the
run-directory tables are in `outputs/audits.py`."""

from confide.envs.calbench.audits.common import AuditError, GameRecord, GameTally
from confide.envs.calbench.audits.episode import measured
from confide.envs.calbench.audits.leaderboard import leaderboard_columns

__all__ = [
    "AuditError",
    "GameRecord",
    "GameTally",
    "leaderboard_columns",
    "measured",
]
