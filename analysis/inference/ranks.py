"""Leaderboard rank uncertainty: each condition's marginal 95% rank interval, simultaneous
rank sets that hold for every condition at once, and P(first) with ties shared.

The marginal interval (``rank_low``, ``rank_high``) holds for one condition looked at alone;
the simultaneous sets (``rank_low_joint``, ``rank_high_joint``) hold jointly, so a reader
scanning the whole leaderboard should use those."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analysis.inference._arrays import (
    MIN_CLUSTERS,
    N_BOOT,
    SEED,
    accuracy_replicates,
    by_source,
    cell_arrays,
    ratio,
)

BY_SCENARIO = "scenario bootstrap of per-trial verdicts"
BY_COUNTS = "parametric bootstrap from each condition's counts (trials independent; no clustering)"


def first_place_shares(ranks: np.ndarray) -> np.ndarray:
    """P(first) per condition from (replicates, conditions) ranks: in each replicate the
    conditions tied at rank 1 share it equally, so the shares sum to 1.

    >>> first_place_shares(np.array([[1, 1, 3], [1, 2, 3]])).tolist()
    [0.75, 0.25, 0.0]
    """
    first = ranks == 1
    return (first / first.sum(axis=1, keepdims=True)).mean(axis=0)


def simultaneous_rank_sets(ranks: np.ndarray, level: float = 0.95) -> tuple:
    """(low, high, joint coverage): one rank interval per condition such that, in at least
    ``level`` of the replicates, every condition's rank lies in its interval at once.

    Each interval is the pair of order statistics at a common tail share ``a`` of that
    condition's ranks; ``a`` is the largest (narrowest sets) whose joint coverage in the
    replicates reaches ``level``, found by bisection over the replicate count (coverage falls
    as ``a`` grows).

    Examples
    --------
    Nineteen replicates agree on the order; one reverses it. At 90% the sets leave that one
    out:

    >>> import numpy as np
    >>> ranks = np.array([[1, 2, 3]] * 19 + [[3, 2, 1]])
    >>> low, high, coverage = simultaneous_rank_sets(ranks, level=0.9)
    >>> low.tolist(), high.tolist(), coverage
    ([1, 2, 3], [1, 2, 3], 0.95)
    """
    n_boot = len(ranks)
    ordered = np.sort(ranks, axis=0)

    def sets(tail: int):
        return ordered[tail], ordered[n_boot - 1 - tail]

    def coverage(tail: int) -> float:
        low, high = sets(tail)
        return float(((ranks >= low) & (ranks <= high)).all(axis=1).mean())

    lo, hi = 0, (n_boot - 1) // 2  # coverage(0) is 1: every replicate within [min, max]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if coverage(mid) >= level:
            lo = mid
        else:
            hi = mid - 1
    low, high = sets(lo)
    return low, high, coverage(lo)


def _summarise(labels, estimate, replicates, method, n_clusters, source) -> pd.DataFrame:
    ranks = rankdata(-np.nan_to_num(replicates, nan=-1.0), axis=1, method="min")
    observed = rankdata(-np.nan_to_num(estimate, nan=-1.0), method="min")
    low, high = np.percentile(ranks, [2.5, 97.5], axis=0, method="nearest")
    joint_low, joint_high, coverage = simultaneous_rank_sets(ranks)
    return pd.DataFrame(
        {
            "source": source,
            "condition": labels,
            "estimate": estimate,
            "rank": observed.astype(int),
            "rank_low": low.astype(int),
            "rank_high": high.astype(int),
            "rank_low_joint": joint_low.astype(int),
            "rank_high_joint": joint_high.astype(int),
            "joint_coverage": coverage,
            "p_first": first_place_shares(ranks),
            "method": method,
            "n_clusters": n_clusters,
        }
    ).sort_values(["rank", "condition"], ignore_index=True)


def rank_uncertainty(cells: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED) -> pd.DataFrame:
    """Rank by mean-trial accuracy within each source, with a marginal 95% bootstrap
    interval for each condition's rank, simultaneous 95% rank sets
    (:func:`simultaneous_rank_sets`) and its probability of ranking first (ties shared);
    scenarios are resampled (shared by all conditions, so the comparison stays paired).
    Ties share the best rank. A source of fewer than ``MIN_CLUSTERS`` scenarios gets no
    rank sets and no P(first) (``note`` says why).

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=3, n_scenarios=50, seed=4)
    >>> out = rank_uncertainty(cells, n_boot=500)
    >>> round(float(out["p_first"].sum()), 6)
    1.0
    """
    frames = []
    for offset, (source, part) in enumerate(by_source(cells)):
        arrays = cell_arrays(part)
        replicates = accuracy_replicates(arrays, n_boot, seed + offset)
        estimate = ratio(arrays.n_correct.sum(1), arrays.n_trials.sum(1))
        clusters = (arrays.scored > 0).sum(1)
        frame = _summarise(arrays.conditions, estimate, replicates, BY_SCENARIO, clusters, source)
        if len(arrays.scenarios) < MIN_CLUSTERS:
            sets = ["rank_low", "rank_high", "rank_low_joint", "rank_high_joint"]
            frame[sets] = pd.NA
            frame[sets] = frame[sets].astype("Int64")
            frame[["joint_coverage", "p_first"]] = np.nan
            frame["note"] = (
                f"no rank sets: {len(arrays.scenarios)} scenario(s), fewer than {MIN_CLUSTERS}"
            )
        frames.append(frame)
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
