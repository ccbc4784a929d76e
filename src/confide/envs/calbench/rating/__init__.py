"""OpenSkill leaderboard for CalBench (the CalBench paper §D.4 "Score-margin updates", appendix E):
per-metric score-margin ratings, an MMR headline, reference protocols ranked by raw metrics,
ratings persisted as versioned JSON and updated incrementally run by run."""

from confide.envs.calbench.rating.output import (
    leaderboard_tables,
    print_leaderboard,
    write_model_csv,
    write_reference_csv,
)
from confide.envs.calbench.rating.results import (
    RatingInputError,
    SeatResult,
    parse_results,
    read_results_csv,
)
from confide.envs.calbench.rating.standings import (
    ModelStanding,
    ReferenceStanding,
    mmr,
    model_standings,
    reference_standings,
)
from confide.envs.calbench.rating.state import (
    PAPER_MARGINS,
    LeaderboardState,
    Metric,
    MetricRating,
    RatingConfig,
    load_state,
    save_state,
)
from confide.envs.calbench.rating.update import apply_results, build_leaderboard

__all__ = [
    "PAPER_MARGINS",
    "LeaderboardState",
    "Metric",
    "MetricRating",
    "ModelStanding",
    "RatingConfig",
    "RatingInputError",
    "ReferenceStanding",
    "SeatResult",
    "apply_results",
    "build_leaderboard",
    "leaderboard_tables",
    "load_state",
    "mmr",
    "model_standings",
    "parse_results",
    "print_leaderboard",
    "read_results_csv",
    "reference_standings",
    "save_state",
    "write_model_csv",
    "write_reference_csv",
]
