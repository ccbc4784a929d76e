"""Task-level statistics for benchmark reports: pure functions, explicit seeds.

Paper reference: Incognita (the Incognita paper) section 5 "Estimator",
section 6.1 and appendix B. Every quantity is computed at the task level (repetitions
averaged within a task first); randomness comes only from a seed or a generator passed
in by the caller.
"""

from confide.stats._validate import SeedLike, StatsError
from confide.stats.aggregate import TaskTable, aggregate_tasks, task_means
from confide.stats.bootstrap import RowStatistic, bootstrap_interval, row_mean
from confide.stats.concordance import ConcordanceResult, split_half_concordance
from confide.stats.extrapolation import (
    CorpusSizeEstimate,
    corpus_size,
    corpus_size_extrapolation,
)
from confide.stats.interaction import (
    InteractionRow,
    difference_in_differences,
    dispersion_contrast,
    dispersion_test,
    pairwise_interactions,
)
from confide.stats.intervals import (
    Interval,
    TInterval,
    paired_difference,
    t_interval,
    wilson_interval,
)
from confide.stats.multiplicity import benjamini_hochberg, holm
from confide.stats.pairs import PairComparison, pair_gaps, pair_indices, pairwise_comparisons
from confide.stats.permutation import EXACT_MAX_N, SignFlipResult, sign_flip_test
from confide.stats.power import minimum_detectable_effect, paired_t_power, required_tasks

__all__ = [
    "EXACT_MAX_N",
    "ConcordanceResult",
    "CorpusSizeEstimate",
    "InteractionRow",
    "Interval",
    "PairComparison",
    "RowStatistic",
    "SeedLike",
    "SignFlipResult",
    "StatsError",
    "TInterval",
    "TaskTable",
    "aggregate_tasks",
    "benjamini_hochberg",
    "bootstrap_interval",
    "corpus_size",
    "corpus_size_extrapolation",
    "difference_in_differences",
    "dispersion_contrast",
    "dispersion_test",
    "holm",
    "minimum_detectable_effect",
    "pair_gaps",
    "pair_indices",
    "paired_difference",
    "paired_t_power",
    "pairwise_comparisons",
    "pairwise_interactions",
    "required_tasks",
    "row_mean",
    "sign_flip_test",
    "split_half_concordance",
    "t_interval",
    "task_means",
    "wilson_interval",
]
