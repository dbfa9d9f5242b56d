"""What a paired contrast could detect: the minimum detectable difference of the paired tests
of :mod:`.paired` at a number of scenarios, from the discordance (McNemar's score test, its
exact power) or the spread of the per-scenario differences (the paired t)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, stats

from analysis.inference.detectable import mcnemar_mdd, t_effect

#: Bisection steps of the paired t's effect at fewer df: the bracket, at most twice the
#: effect wide, ends below 5e-16 of it.
_T_STEPS = 52


def minimum_detectable_difference(
    n_pairs: int,
    *,
    discordance: float | None = None,
    sd_diff: float | None = None,
    df: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """The smallest paired difference detectable with ``power`` at two-sided ``alpha``.

    With ``discordance`` (share of discordant pairs, binary outcomes): the difference at
    which McNemar's score test, as :func:`.paired.paired_binary_difference` runs it, has ``power``
    on ``n_pairs`` independent scenarios, from its exact power (the binomial sum over the
    discordant pairs, :func:`analysis.inference.detectable_mcnemar.mcnemar_mdd`; Connor's
    normal approximation, used before, misstated it by up to 5 points at 50 to 106
    scenarios). With ``sd_diff`` (continuous per-scenario differences): the paired t-test's
    detectable effect size times ``sd_diff``, at ``df`` degrees of freedom: by default
    n - 1 (:func:`analysis.inference.detectable.t_effect`, normal differences); where a few
    scenarios carry the spread :func:`.paired.paired_accuracy_difference` runs at fewer
    (:func:`.paired.effective_df` of their kurtosis, its column ``df``), with less power,
    and the noncentral t at that df gives it.

    Parameters
    ----------
    n_pairs : int
        Scenarios scored in both settings.
    discordance : float, optional
        The share of them whose binary outcome differs between the settings (the true one,
        or the observed one as an estimate). Give this or ``sd_diff``.
    sd_diff : float, optional
        The standard deviation of the per-scenario differences of mean-trial accuracy.
    df : float, optional
        The paired t's degrees of freedom, with ``sd_diff`` (default n - 1).
    alpha, power : float
        The two-sided level and the power.

    Returns
    -------
    float
        The minimum detectable difference of proportions; NaN with fewer than two pairs,
        no discordance, or no difference up to the discordance detectable.

    See Also
    --------
    power_table : this per contrast of a paired table.
    analysis.inference.detectable_mcnemar.mcnemar_power : the exact power it inverts.
    analysis.inference.detectable_effect : the same for a design, with unpaired and gate
        comparisons.

    Examples
    --------
    >>> round(minimum_detectable_difference(100, sd_diff=1.0), 3)
    0.283
    >>> round(minimum_detectable_difference(20, sd_diff=1.0, df=9.74), 3)
    0.698
    >>> round(minimum_detectable_difference(100, discordance=0.2), 3)
    0.119
    >>> round(minimum_detectable_difference(30, discordance=0.2), 3)
    0.191
    >>> minimum_detectable_difference(20, discordance=0.2)  # not even 0.2 reaches 80%
    nan
    """
    if n_pairs < 2:
        return np.nan
    if sd_diff is not None:
        if df is None or df >= n_pairs - 1:
            return t_effect(int(n_pairs), alpha, power) * float(sd_diff)
        return _t_effect_at(int(n_pairs), float(df), alpha, power) * float(sd_diff)
    if discordance is None or not discordance > 0:
        return np.nan
    return mcnemar_mdd(int(n_pairs), min(float(discordance), 1.0), alpha, power)


def _t_effect_at(n: int, df: float, alpha: float, power: float) -> float:
    """The standardised effect the two-sided t-test on ``n`` differences at ``df`` degrees
    of freedom detects with ``power`` (scipy's noncentral t, Brent's method)."""
    critical = stats.t.isf(alpha / 2, df)

    def gap(effect: float) -> float:
        centrality = effect * np.sqrt(n)
        upper = stats.nct.sf(critical, df, centrality)
        return upper + stats.nct.sf(critical, df, -centrality) - power

    return float(optimize.brentq(gap, 1e-9, 100.0, xtol=1e-12))


def _t_effects_at(n: np.ndarray, df: np.ndarray, alpha: float, power: float) -> np.ndarray:
    """:func:`_t_effect_at` at each (``n``, ``df``), all in one bisection: from the z-test's
    effect (the t at any df has less power there) up to an effect whose power is reached."""
    critical = stats.t.isf(alpha / 2, df)

    def gap(effect: np.ndarray) -> np.ndarray:
        centrality = effect * np.sqrt(n)
        upper = stats.nct.sf(critical, df, centrality)
        return upper + stats.nct.sf(critical, df, -centrality) - power

    low = (stats.norm.isf(alpha / 2) + stats.norm.ppf(power)) / np.sqrt(n)
    high = 2 * low
    while np.any(short := gap(high) < 0):
        high = np.where(short, 2 * high, high)
    for _ in range(_T_STEPS):
        middle = (low + high) / 2
        above = gap(middle) >= 0
        low, high = np.where(above, low, middle), np.where(above, middle, high)
    return high


def _mdds(n: np.ndarray, binary: np.ndarray, paired: pd.DataFrame, alpha: float, power: float):
    """:func:`minimum_detectable_difference` of every row of ``paired`` (``n`` its pairs,
    ``binary`` its metric's kind), each kind of test solved once over all its rows."""
    mdd = np.full(len(n), np.nan)
    discordance = paired["discordance"].to_numpy(dtype="float64")
    sd = paired["sd_diff"].to_numpy(dtype="float64")
    df = paired["df"].to_numpy(dtype="float64") if "df" in paired else np.full(len(n), np.nan)
    mcnemar = binary & (n >= 2) & (discordance > 0)
    if mcnemar.any():
        psi = np.minimum(discordance[mcnemar], 1.0)
        mdd[mcnemar] = mcnemar_mdd(n[mcnemar], psi, alpha, power)
    t = ~binary & (n >= 2) & ~np.isnan(sd)
    full = t & ~(df < n - 1)  # no df, or at least n - 1: the t on n - 1
    if full.any():
        mdd[full] = t_effect(n[full], alpha, power) * sd[full]
    fewer = t & (df < n - 1)
    if fewer.any():
        mdd[fewer] = _t_effects_at(n[fewer], df[fewer], alpha, power) * sd[fewer]
    return mdd


def power_table(paired: pd.DataFrame, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """Per paired contrast: the minimum detectable difference at its number of scenarios
    given the observed discordance (binary metrics) or spread of differences (mean-trial).

    Parameters
    ----------
    paired : DataFrame
        Paired contrasts, as :func:`.paired.paired_accuracy_difference` and
        :func:`.paired.paired_binary_difference` return them (``source, contrast, metric,
        n_clusters, discordance, sd_diff, estimate``).
    alpha, power : float
        Two-sided level and power, each in (0, 1).

    Returns
    -------
    DataFrame
        ``source, contrast, metric, n_clusters, basis, estimate, mdd, method``: one row per
        contrast, its estimate beside ``mdd`` (:func:`minimum_detectable_difference`, NaN
        where the design cannot reach the power) and ``basis``, what the MDD rests on.

    See Also
    --------
    minimum_detectable_difference : The MDD of one contrast.
    detectable_effect : The MDD of a design before it is run.

    Examples
    --------
    >>> from analysis.inference.paired import (
    ...     paired_accuracy_difference, paired_binary_difference)
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=60, seed=6)
    >>> tables = [paired_accuracy_difference(cells), paired_binary_difference(cells)]
    >>> paired = pd.concat(tables)
    >>> power_table(paired)[["metric", "basis", "estimate", "mdd"]].round(3)
                    metric                    basis  estimate    mdd
    0  mean_trial_accuracy  sd of differences 0.287     0.147  0.106
    1       modal_accuracy        discordance 0.217     0.183  0.159
    """
    n = paired["n_clusters"].fillna(0).to_numpy().astype("int64")
    binary = (paired["metric"] != "mean_trial_accuracy").to_numpy()
    mdd = _mdds(n, binary, paired, alpha, power)
    rows = []
    for r, size, kind, value in zip(paired.itertuples(index=False), n, binary, mdd, strict=True):
        rows.append(
            {
                "source": r.source,
                "contrast": r.contrast,
                "metric": r.metric,
                "n_clusters": int(size),
                "basis": f"discordance {r.discordance:.3f}"
                if kind
                else f"sd of differences {r.sd_diff:.3f}",
                "estimate": r.estimate,
                "mdd": float(value),
                "method": "McNemar score test, exact power"
                if kind
                else "paired t at the contrast's effective df (noncentral t)",
            }
        )
    return pd.DataFrame(rows)
