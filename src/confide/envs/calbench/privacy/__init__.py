"""Protocol-semantic VPS for the CalBench reference protocols (the CalBench paper, section 3.2,
F.1, F.2, F.4, F.5): beliefs, the Table 10 typed-message rules, per-game rows and the four
CSV tables."""

from confide.envs.calbench.privacy.beliefs import PRIOR, BeliefTable, nudge
from confide.envs.calbench.privacy.rules import RuleState, Update, message_updates
from confide.envs.calbench.privacy.vps import (
    VPS_FLOOR,
    EvidenceRow,
    GameRow,
    GameVps,
    PairRoundRow,
    TargetRow,
    VpsError,
    excess_vps_by_seat,
    vps_rows,
)

__all__ = [
    "PRIOR",
    "VPS_FLOOR",
    "BeliefTable",
    "EvidenceRow",
    "GameRow",
    "GameVps",
    "PairRoundRow",
    "RuleState",
    "TargetRow",
    "Update",
    "VpsError",
    "excess_vps_by_seat",
    "message_updates",
    "nudge",
    "vps_rows",
]
