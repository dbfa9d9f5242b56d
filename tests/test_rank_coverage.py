"""The simultaneous rank sets hold against known truth: in simulated releases, every
condition's true rank lies in its set at once in at least 94% of draws (within Monte Carlo
error). ``benchmarks/bench_rank_sets.py`` runs the full-size version."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analysis.inference._arrays import ratio, scenario_weights
from analysis.inference.ranks import rank_uncertainty_from_counts, simultaneous_rank_sets
from analysis.inference.simulate import expected_accuracy, simulate_counts

DRAWS = 120
#: 94% less two Monte Carlo standard errors at DRAWS draws.
FLOOR = 0.94 - 2 * np.sqrt(0.94 * 0.06 / DRAWS)


def _all_inside(low, high, truth) -> bool:
    true_rank = rankdata(-np.asarray(truth), method="min")
    return bool(((low <= true_rank) & (true_rank <= high)).all())


def test_clustered_sets_cover_the_true_ranks_jointly():
    """Scenario and cell random effects (latent ICC about 0.45), 12 conditions close
    together, 40 scenarios of 5 trials; the sets from a scenario bootstrap."""
    rng = np.random.default_rng(11)
    n_conditions, n_scenarios, scenario_sd, cell_sd = 12, 40, 1.2, 0.8
    covered = []
    for draw in range(DRAWS):
        logits = rng.normal(1.0, 0.3, size=n_conditions)
        patterns = rng.normal(0.0, 0.5, size=n_scenarios)
        truth = expected_accuracy(
            logits[:, None] + patterns[None, :], float(np.hypot(scenario_sd, cell_sd))
        ).mean(axis=1)
        correct = simulate_counts(
            rng, logits, patterns, scenario_sd=scenario_sd, cell_sd=cell_sd
        ).astype("float64")
        trials = np.full_like(correct, 5.0)
        weights = scenario_weights(n_scenarios, 600, seed=draw)
        replicates = ratio(weights @ correct.T, weights @ trials.T)
        estimate = correct.sum(1) / trials.sum(1)
        sets = simultaneous_rank_sets(estimate, replicates, n_clusters=n_scenarios)
        covered.append(_all_inside(sets["low_joint"], sets["high_joint"], truth))
    assert np.mean(covered) >= FLOOR


def test_sets_from_counts_cover_the_true_ranks_jointly_when_trials_are_independent():
    """The count model the sets assume: 20 conditions at rates 0.70 to 0.85, 530 trials
    each, drawn independently."""
    rng = np.random.default_rng(12)
    covered = []
    for draw in range(DRAWS):
        truth = rng.uniform(0.70, 0.85, size=20)
        conditions = pd.DataFrame(
            {
                "label": [f"c{i:02d}" for i in range(20)],
                "n_trials": 530,
                "n_trials_correct": rng.binomial(530, truth),
            }
        )
        ranks = rank_uncertainty_from_counts(conditions, n_boot=600, seed=draw)
        ranks = ranks.set_index("condition").loc[conditions.label]
        covered.append(_all_inside(ranks.rank_low_joint, ranks.rank_high_joint, truth))
    assert np.mean(covered) >= FLOOR


def test_a_design_effect_widens_the_sets_and_says_so():
    conditions = pd.DataFrame(
        {"label": list("abcd"), "n_trials": 530, "n_trials_correct": [460, 450, 440, 400]}
    )
    plain = rank_uncertainty_from_counts(conditions, n_boot=800)
    inflated = rank_uncertainty_from_counts(
        conditions, n_boot=800, design_effect=2.5, design_effect_source="the smallest allowed"
    )
    width = lambda r: (r.rank_high_joint - r.rank_low_joint).sum()  # noqa: E731
    assert width(inflated) > width(plain)
    assert plain.clustering.str.startswith("trials independent").all()
    assert inflated.clustering.str.contains("the smallest allowed").all()
