"""Inference on the benchmark's results, one method per function, tidy frames out.

Every function takes a long table (scored cells from ``analysis.scoring.rules.score_cells``, or
the published condition counts) and returns one row per condition, contrast or quantity
with ``estimate, ci_low, ci_high`` (95%), ``p`` where there is a test, ``method`` and
``n_clusters`` (scenarios). Resampling is seeded (``SEED``) with ``N_BOOT`` resamples.

Estimand (:data:`ESTIMAND`, stated once): every clustered interval is about a population of
scenarios like these (scenarios resampled), unless its row says otherwise; an interval that
treats trials as independent fits only these scenarios held fixed. Fewer than
:data:`MIN_CLUSTERS` scenarios: NaN bounds and a note; every interval's method is named in
``method``; never a zero-width interval.

- :mod:`.paired`: reasoning floor against high, paired by scenario
- :mod:`.paired_power`: what a paired contrast could detect
- :mod:`.unpaired`: the same contrast from counts, clustering accounted for
- :mod:`.two_proportions`: the two-proportion score test and the interval inverting it
- :mod:`.detectable`: what a design can detect, and the scenarios a difference needs
- :mod:`.detectable_mcnemar`: the exact power of McNemar's test, and what it detects
- :mod:`.detectable_release`: a release's design, and Table 2's adjacent gaps against it
- :mod:`.detectable_power`: the power each detectable difference achieves in simulated releases
- :mod:`.clustered`: scenario-clustered accuracy per condition (and by GEE), ICC, design effect
- :mod:`.pooled`: Table 3 per pattern, the mirror gap and the headline asymmetry, clustered
- :mod:`.design_bound`: the smallest design effect published counts allow (Table 2)
- :mod:`.multiplicity`: Holm and Benjamini-Hochberg within named families (:data:`FAMILIES`)
- :mod:`.pairing_bound`: the correlation across settings an unpaired Holm survivor needs
- :mod:`.passk`: pass^k
- :mod:`.ranks`: leaderboard rank uncertainty (rank sets from pairwise max-T intervals)
- :mod:`.difficulty`: pattern odds ratios with scenario random effects
- :mod:`.simulate`: a generator with known truth, for validation
- :mod:`.calibration`: releases drawn with known truth over a grid of designs (the oracle's model)
- :mod:`.coverage`: coverage and type-I error of any method on them, held to the standard

May import: :mod:`analysis.corpus`, :mod:`analysis.trials`, :mod:`analysis.scoring`.
"""

from analysis.inference._arrays import ESTIMAND, MIN_CLUSTERS, N_BOOT, SEED
from analysis.inference.clustered import (
    anova_icc,
    clustered_accuracy,
    gee_accuracy,
    trial_rows,
)
from analysis.inference.design_bound import design_effect_bound, least_clustered_counts
from analysis.inference.detectable import detectable_effect, scenarios_needed
from analysis.inference.detectable_power import simulated_power
from analysis.inference.detectable_release import rank_gaps, release_design
from analysis.inference.difficulty import pattern_difficulty
from analysis.inference.multiplicity import FAMILIES, adjust_pvalues
from analysis.inference.paired import (
    newcombe_paired_interval,
    paired_accuracy_difference,
    paired_binary_difference,
    reasoning_pairs_of,
)
from analysis.inference.paired_power import minimum_detectable_difference, power_table
from analysis.inference.pairing_bound import correlation_needed
from analysis.inference.passk import pass_hat_k
from analysis.inference.pooled import (
    pooled_direction_asymmetry,
    pooled_mirror_gap,
    pooled_pattern_accuracy,
)
from analysis.inference.ranks import (
    rank_uncertainty,
    rank_uncertainty_from_counts,
    simultaneous_rank_sets,
)
from analysis.inference.simulate import simulate_release
from analysis.inference.two_proportions import score_difference, score_test
from analysis.inference.unpaired import unpaired_reasoning

__all__ = [
    "ESTIMAND",
    "FAMILIES",
    "MIN_CLUSTERS",
    "N_BOOT",
    "SEED",
    "adjust_pvalues",
    "anova_icc",
    "clustered_accuracy",
    "correlation_needed",
    "design_effect_bound",
    "detectable_effect",
    "gee_accuracy",
    "least_clustered_counts",
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
    "rank_gaps",
    "rank_uncertainty",
    "rank_uncertainty_from_counts",
    "reasoning_pairs_of",
    "release_design",
    "scenarios_needed",
    "score_difference",
    "score_test",
    "simulate_release",
    "simulated_power",
    "simultaneous_rank_sets",
    "trial_rows",
    "unpaired_reasoning",
]
