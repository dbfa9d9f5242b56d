"""Inference on the benchmark's results, one method per function, tidy frames out.

Every function takes a long table (scored cells from ``analysis.scoring.score_cells``, or
the published condition counts) and returns one row per condition, contrast or quantity
with ``estimate, ci_low, ci_high`` (95%), ``p`` where there is a test, ``method`` and
``n_clusters`` (scenarios). Resampling is seeded (``SEED``) with ``N_BOOT`` resamples.

- :mod:`.paired`: reasoning floor against high, paired by scenario; unpaired fallback; power
- :mod:`.clustered`: scenario-clustered intervals, ICC and design effect, pooled quantities
- :mod:`.multiplicity`: Holm and Benjamini-Hochberg
- :mod:`.passk`: pass^k
- :mod:`.ranks`: leaderboard rank uncertainty
- :mod:`.difficulty`: pattern odds ratios with scenario random effects
- :mod:`.simulate`: a generator with known truth, for validation
"""

from analysis.inference._arrays import N_BOOT, SEED
from analysis.inference.clustered import (
    anova_icc,
    clustered_accuracy,
    gee_accuracy,
    pooled_direction_asymmetry,
    pooled_mirror_gap,
    pooled_pattern_accuracy,
    trial_rows,
)
from analysis.inference.difficulty import pattern_difficulty
from analysis.inference.multiplicity import adjust_pvalues
from analysis.inference.paired import (
    minimum_detectable_difference,
    newcombe_paired_interval,
    paired_accuracy_difference,
    paired_binary_difference,
    power_table,
    reasoning_pairs_of,
    unpaired_reasoning,
)
from analysis.inference.passk import pass_hat_k
from analysis.inference.ranks import rank_uncertainty, rank_uncertainty_from_counts
from analysis.inference.simulate import simulate_release

__all__ = [
    "N_BOOT",
    "SEED",
    "adjust_pvalues",
    "anova_icc",
    "clustered_accuracy",
    "gee_accuracy",
    "minimum_detectable_difference",
    "newcombe_paired_interval",
    "paired_accuracy_difference",
    "paired_binary_difference",
    "pass_hat_k",
    "pattern_difficulty",
    "pooled_direction_asymmetry",
    "pooled_mirror_gap",
    "pooled_pattern_accuracy",
    "power_table",
    "rank_uncertainty",
    "rank_uncertainty_from_counts",
    "reasoning_pairs_of",
    "simulate_release",
    "trial_rows",
    "unpaired_reasoning",
]
