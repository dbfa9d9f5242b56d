"""What a paired contrast could detect: the minimum detectable difference of the paired tests
of :mod:`.paired` at a number of scenarios, from the discordance (McNemar's score test, its
exact power) or the spread of the per-scenario differences (the paired t)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.inference.detectable import mcnemar_mdd, t_effect

#: Bisection steps of the paired t's effect: the bracket, from 0 to at most four times the
#: z-test's effect, ends below 1e-17 of it.
_T_STEPS = 60


def minimum_detectable_difference(
    n_pairs: int,
    *,
    discordance: float | None = None,
    sd_diff: float | None = None,
    df: float | None = None,
    skewness: float = 0.0,
    kurtosis: float = 3.0,
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

    Non-normal differences (``skewness`` other than 0 or ``kurtosis`` other than 3) change
    the t statistic's spread under the alternative: the test rejects (upper tail) when
    ``mean - q sd > 0`` with ``q = t_crit / sqrt(n)``, whose variance is ``sd^2 / n (1 - q g
    + q^2 (k - 1) / 4)`` to first order (the delta method: the sample mean and SD covary by
    ``g sd^2 / 2n``, the SD varies by ``sd^2 (k - 1) / 4n``), ``1 + q^2 / 2`` for normal
    differences. The power is the noncentral t's with the statistic's deviation from its
    centrality scaled by the square root of their ratio, so normal differences give the
    noncentral t itself. Differences skewed toward the difference (a long tail on its side,
    as near an accuracy of 1 where most differences are 0 and a few scenarios gain much)
    move the mean and SD together and lift the power above 50%: on simulated releases of
    50 and 106 scenarios (ICC 0.75, skewness 0.7, kurtosis 5.1) the test reached 60.8% and
    92.4% where the noncentral t states 60.0% and 90.9% and this 60.8% and 92.2%.

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
    skewness : float
        The per-scenario differences' skewness (g1), signed toward the difference to
        detect: positive where their long tail lies on its side. Default 0.
    kurtosis : float
        Their kurtosis (Pearson's, 3 for normal differences). Default 3.
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
    >>> round(minimum_detectable_difference(50, sd_diff=1.0, df=24.4), 3)
    0.413
    >>> round(minimum_detectable_difference(50, sd_diff=1.0, df=24.4, skewness=0.7,
    ...                                     kurtosis=5.06), 3)
    0.403
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
        full = df is None or df >= n_pairs - 1
        if full and skewness == 0 and kurtosis == 3:
            return t_effect(int(n_pairs), alpha, power) * float(sd_diff)
        df = n_pairs - 1 if full else df
        n, df_, skew, kurt = (np.array([float(v)]) for v in (n_pairs, df, skewness, kurtosis))
        effect = _t_effects_at(n, df_, alpha, power, skew, kurt)
        return float(effect[0]) * float(sd_diff)
    if discordance is None or not discordance > 0:
        return np.nan
    return mcnemar_mdd(int(n_pairs), min(float(discordance), 1.0), alpha, power)


def _spread_ratios(n, df, alpha, skewness, kurtosis):
    """The SDs of ``mean -/+ q sd`` (upper, lower rejection) relative to normal differences'
    (see :func:`minimum_detectable_difference`), each at least 1e-6."""
    q = stats.t.isf(alpha / 2, df) / np.sqrt(n)
    spread = q**2 * (np.asarray(kurtosis) - 1) / 4
    normal = np.sqrt(1 + q**2 / 2)
    upper = np.sqrt(np.maximum(1 - q * skewness + spread, 1e-12)) / normal
    lower = np.sqrt(np.maximum(1 + q * skewness + spread, 1e-12)) / normal
    return upper, lower


def _t_power_at(effect, n, df, alpha, skewness=0.0, kurtosis=3.0):
    """The two-sided paired t's power at a standardised ``effect`` on ``n`` differences at
    ``df``: the noncentral t, its deviation from the centrality scaled by the differences'
    shape (:func:`_spread_ratios`; 1 for normal differences)."""
    critical = stats.t.isf(alpha / 2, df)
    centrality = effect * np.sqrt(n)
    upper, lower = _spread_ratios(n, df, alpha, skewness, kurtosis)
    reject_up = stats.nct.sf(centrality + (critical - centrality) / upper, df, centrality)
    reject_down = stats.nct.cdf(centrality - (critical + centrality) / lower, df, centrality)
    return reject_up + reject_down


def _t_effects_at(n, df, alpha, power, skewness=None, kurtosis=None) -> np.ndarray:
    """The standardised effect the two-sided paired t on ``n`` differences at ``df``
    detects with ``power`` (:func:`_t_power_at`), at each (``n``, ``df``, shape) in one
    bisection: from 0 up to an effect whose power is reached."""
    skewness = np.zeros(len(n)) if skewness is None else skewness
    kurtosis = np.full(len(n), 3.0) if kurtosis is None else kurtosis

    def gap(effect: np.ndarray) -> np.ndarray:
        return _t_power_at(effect, n, df, alpha, skewness, kurtosis) - power

    high = 2 * (stats.norm.isf(alpha / 2) + stats.norm.ppf(power)) / np.sqrt(n)
    while np.any(short := gap(high) < 0):
        high = np.where(short, 2 * high, high)
    low = np.zeros(len(n))
    for _ in range(_T_STEPS):
        middle = (low + high) / 2
        above = gap(middle) >= 0
        low, high = np.where(above, low, middle), np.where(above, middle, high)
    return high


def _column(paired: pd.DataFrame, name: str, default: float) -> np.ndarray:
    """``paired[name]`` as floats, ``default`` where it is missing or NaN."""
    if name not in paired:
        return np.full(len(paired), default)
    return paired[name].to_numpy(dtype="float64", na_value=np.nan).copy()


def _mdds(n: np.ndarray, binary: np.ndarray, paired: pd.DataFrame, alpha: float, power: float):
    """:func:`minimum_detectable_difference` of every row of ``paired`` (``n`` its pairs,
    ``binary`` its metric's kind), each kind of test solved once over all its rows; the
    paired t's at its ``df`` and the differences' shape (``skew_diff`` toward the estimate,
    ``kurtosis_diff``) where the table gives them."""
    mdd = np.full(len(n), np.nan)
    discordance = paired["discordance"].to_numpy(dtype="float64")
    sd = paired["sd_diff"].to_numpy(dtype="float64")
    df = _column(paired, "df", np.nan)
    toward = np.sign(_column(paired, "estimate", 0.0))
    skewness = np.nan_to_num(_column(paired, "skew_diff", 0.0) * toward)
    kurtosis = _column(paired, "kurtosis_diff", 3.0)
    kurtosis = np.where(np.isnan(kurtosis), 3.0, kurtosis)
    mcnemar = binary & (n >= 2) & (discordance > 0)
    if mcnemar.any():
        psi = np.minimum(discordance[mcnemar], 1.0)
        mdd[mcnemar] = mcnemar_mdd(n[mcnemar], psi, alpha, power)
    t = ~binary & (n >= 2) & ~np.isnan(sd)
    normal = t & ~(df < n - 1) & (skewness == 0) & (kurtosis == 3)  # the t on n - 1
    if normal.any():
        mdd[normal] = t_effect(n[normal], alpha, power) * sd[normal]
    other = t & ~normal
    if other.any():
        at = np.where(df < n - 1, df, n - 1)[other]
        effect = _t_effects_at(n[other], at, alpha, power, skewness[other], kurtosis[other])
        mdd[other] = effect * sd[other]
    return mdd


def power_table(paired: pd.DataFrame, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """Per paired contrast: the minimum detectable difference at its number of scenarios
    given the observed discordance (binary metrics) or spread of differences (mean-trial).

    Parameters
    ----------
    paired : DataFrame
        Paired contrasts, as :func:`.paired.paired_accuracy_difference` and
        :func:`.paired.paired_binary_difference` return them (``source, contrast, metric,
        n_clusters, discordance, sd_diff, estimate``; the paired t's ``df``, ``skew_diff``
        and ``kurtosis_diff`` where given: see :func:`minimum_detectable_difference`).
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
    0  mean_trial_accuracy  sd of differences 0.287     0.147  0.103
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
                else "paired t at the contrast's effective df (noncentral t, corrected for "
                "the differences' skewness and kurtosis)",
            }
        )
    return pd.DataFrame(rows)
