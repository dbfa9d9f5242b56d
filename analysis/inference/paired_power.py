"""What a paired contrast could detect: the minimum detectable difference of the paired tests
of :mod:`.paired` at a number of scenarios, from the discordance (McNemar's score test, its
exact power) or the spread of the per-scenario differences (the paired t)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, stats

from analysis.inference.detectable import mcnemar_mdd, t_effect


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
    rows = []
    for r in paired.itertuples(index=False):
        n = int(r.n_clusters) if pd.notna(r.n_clusters) else 0
        binary = r.metric != "mean_trial_accuracy"
        mdd = minimum_detectable_difference(
            n,
            discordance=r.discordance if binary and pd.notna(r.discordance) else None,
            sd_diff=None if binary or pd.isna(r.sd_diff) else r.sd_diff,
            df=None if binary or pd.isna(getattr(r, "df", np.nan)) else r.df,
            alpha=alpha,
            power=power,
        )
        rows.append(
            {
                "source": r.source,
                "contrast": r.contrast,
                "metric": r.metric,
                "n_clusters": n,
                "basis": f"discordance {r.discordance:.3f}"
                if binary
                else f"sd of differences {r.sd_diff:.3f}",
                "estimate": r.estimate,
                "mdd": mdd,
                "method": "McNemar score test, exact power"
                if binary
                else "paired t at the contrast's effective df (noncentral t)",
            }
        )
    return pd.DataFrame(rows)
