"""Leaderboard rank uncertainty: bootstrap intervals for each condition's rank, P(first)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analysis.inference._arrays import (
    N_BOOT,
    SEED,
    accuracy_replicates,
    by_source,
    cell_arrays,
    ratio,
)

BY_SCENARIO = "scenario bootstrap of per-trial verdicts"
BY_COUNTS = "parametric bootstrap from each condition's counts (trials independent; no clustering)"


def _summarise(labels, estimate, replicates, method, n_clusters, source) -> pd.DataFrame:
    ranks = rankdata(-np.nan_to_num(replicates, nan=-1.0), axis=1, method="min")
    observed = rankdata(-np.nan_to_num(estimate, nan=-1.0), method="min")
    low, high = np.percentile(ranks, [2.5, 97.5], axis=0, method="nearest")
    return pd.DataFrame(
        {
            "source": source,
            "condition": labels,
            "estimate": estimate,
            "rank": observed.astype(int),
            "rank_low": low.astype(int),
            "rank_high": high.astype(int),
            "p_first": (ranks == 1).mean(axis=0),
            "method": method,
            "n_clusters": n_clusters,
        }
    ).sort_values(["rank", "condition"], ignore_index=True)


def rank_uncertainty(cells: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED) -> pd.DataFrame:
    """Rank by mean-trial accuracy within each source, with a 95% bootstrap interval for
    each condition's rank and its probability of ranking first; scenarios are resampled
    (shared by all conditions, so the comparison stays paired). Ties share the best rank.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=3, n_scenarios=50, seed=4)
    >>> out = rank_uncertainty(cells, n_boot=500)
    >>> round(float(out["p_first"].sum()), 6) >= 1.0
    True
    """
    frames = []
    for offset, (source, part) in enumerate(by_source(cells)):
        arrays = cell_arrays(part)
        replicates = accuracy_replicates(arrays, n_boot, seed + offset)
        estimate = ratio(arrays.n_correct.sum(1), arrays.n_trials.sum(1))
        clusters = (arrays.scored > 0).sum(1)
        frames.append(
            _summarise(arrays.conditions, estimate, replicates, BY_SCENARIO, clusters, source)
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def rank_uncertainty_from_counts(
    conditions: pd.DataFrame,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    label: str = "label",
) -> pd.DataFrame:
    """Rank uncertainty from per-condition counts only (``n_trials_correct / n_trials``):
    each condition's correct count is redrawn as Binomial(n, k / n), independently, which
    ignores the clustering of trials in scenarios and the pairing across conditions.

    Examples
    --------
    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"label": ["a", "b"], "n_trials_correct": [90, 10],
    ...                            "n_trials": [100, 100], "source": "published"})
    >>> rank_uncertainty_from_counts(conditions, n_boot=500)["p_first"].tolist()
    [1.0, 0.0]
    """
    rng = np.random.default_rng(seed)
    k = conditions["n_trials_correct"].to_numpy(dtype="int64")
    n = conditions["n_trials"].to_numpy(dtype="int64")
    estimate = ratio(k, n)
    replicates = ratio(rng.binomial(n, np.nan_to_num(estimate), size=(n_boot, len(n))), n)
    source = conditions["source"].astype(str).iloc[0] if "source" in conditions else "counts"
    return _summarise(
        conditions[label].astype(str).to_numpy(), estimate, replicates, BY_COUNTS, np.nan, source
    )
