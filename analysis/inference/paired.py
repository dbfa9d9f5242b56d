"""Reasoning floor against high, paired by scenario from per-trial verdicts, and the power
of the paired design (the unpaired contrast from counts: :mod:`.unpaired`)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from analysis.inference._arrays import (
    MIN_CLUSTERS,
    N_BOOT,
    SEED,
    by_source,
    cell_arrays,
    pair_rows,
    ratio,
)
from analysis.inference.two_proportions import SCORE_METHOD
from analysis.scoring.leaderboard import floor_and_high, reasoning_level

UNPAIRED_METHOD = SCORE_METHOD
PAIRED_T = (
    "paired t interval on per-scenario differences, effective df (Satterthwaite, from "
    "their kurtosis: fewer where a few scenarios carry the spread)"
)
PAIRED_T_TEST = "paired t-test at the interval's effective df (the interval's statistic)"
TANGO = "Tango's score interval (inverts the McNemar score test)"
MCNEMAR_SCORE = "McNemar score test, no continuity correction (the interval's statistic)"
NEWCOMBE_PAIRED = "Newcombe paired hybrid score (method 10)"


def reasoning_pairs_of(cells: pd.DataFrame) -> pd.DataFrame:
    """Per source, the models with exactly one floor and one high condition in ``cells``.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.score_cells``) or any table with ``source, model,
        reasoning, condition``.

    Returns
    -------
    DataFrame
        ``source, model, floor, high``: one row per model with a reasoning pair, naming its
        floor and its high condition.

    See Also
    --------
    paired_accuracy_difference, paired_binary_difference : The contrasts of these pairs.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"source": "run", "model": ["m", "m", "x"],
    ...                       "reasoning": ["off", "high", "off"],
    ...                       "condition": ["m (off)", "m (high)", "x (off)"]})
    >>> reasoning_pairs_of(cells).to_dict("records")
    [{'source': 'run', 'model': 'm', 'floor': 'm (off)', 'high': 'm (high)'}]
    """
    columns = ["source", "model", "reasoning", "condition"]
    labels = cells.groupby(columns, observed=True).size().reset_index()[columns].astype(str)
    labels["level"] = labels["reasoning"].map(reasoning_level)
    rows = []
    for (source, model), group in labels.groupby(["source", "model"], sort=True):
        if floor_and_high(group["level"]):
            condition = dict(zip(group["level"], group["condition"], strict=True))
            rows.append({"source": source, "model": model, **condition})
    return pd.DataFrame(rows, columns=["source", "model", "floor", "high"])


def _pairing(n_pairs: int, n_unpaired: int) -> str:
    if n_pairs == 0:
        return "unpaired: no scenario scored in both conditions"
    if n_unpaired:
        return f"partly paired: {n_pairs} scenarios paired, {n_unpaired} in one condition only"
    return "paired"


def paired_accuracy_difference(
    cells: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> pd.DataFrame:
    """Mean-trial accuracy, high minus floor, paired by scenario.

    Per pair, the difference of the two cells' trial accuracies is taken in every scenario
    scored in both conditions; the estimate is their mean, and the test and the interval are
    built on that one statistic, the paired t: mean / (sd / sqrt(n)), referred to Student's t
    at the effective degrees of freedom of the variance, df = 2 / (2 / (n - 1) + (k - 3) / n)
    with k = n sum r^4 / (sum r^2)^2 the differences' kurtosis (r their deviations from
    the mean; Satterthwaite's moment match of the variance estimate's own variance), at
    most n - 1, which it is for normal differences; so the interval excludes 0 exactly when
    p < .05. Near an accuracy of 1 with strongly paired settings most differences are 0 and
    a few scenarios carry the spread: the t at n - 1 df then covered 89.5% (4,000 simulated
    releases of 20 scenarios, ICC 0.75, rate 0.9, pairing 0.9), at the effective df 94.4%.
    Fewer than ``MIN_CLUSTERS`` paired scenarios, or every difference
    alike, gives NaN bounds and a note.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``).
    pairs : DataFrame, optional
        ``source, model, floor, high``; default :func:`reasoning_pairs_of` ``(cells)``.
    n_boot, seed : int
        Unused; kept so that callers passing them keep working.

    Returns
    -------
    DataFrame
        One row per pair: ``source, contrast, metric, estimate, ci_low, ci_high, p, test,
        method, n_clusters, n_unpaired, pairing, sd_diff, df, skew_diff, kurtosis_diff,
        note``; ``n_clusters`` the paired scenarios, ``sd_diff`` the SD of their
        differences, ``df`` the effective degrees of freedom, ``skew_diff`` and
        ``kurtosis_diff`` the differences' skewness and (Pearson's) kurtosis, which
        :func:`power_table` uses.

    See Also
    --------
    paired_binary_difference : modal accuracy and over-refusal, McNemar and Tango.
    unpaired_reasoning : the same contrast from counts alone.
    minimum_detectable_difference : what a paired design of this size detects.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=1)
    >>> out = paired_accuracy_difference(cells)
    >>> out[["contrast", "n_clusters", "pairing"]].to_dict("records")
    [{'contrast': 'sim-01: high - off', 'n_clusters': 40, 'pairing': 'paired'}]
    >>> out[["estimate", "ci_low", "ci_high", "p", "df"]].round(4).values.tolist()
    [[0.03, -0.0487, 0.1087, 0.4456, 39.0]]
    """
    del n_boot, seed
    pairs = reasoning_pairs_of(cells) if pairs is None else pairs
    rows = []
    for source, part in by_source(cells):
        arrays = cell_arrays(part)
        labels = {"metric": "mean_trial_accuracy", "test": PAIRED_T_TEST}
        for row, lo, hi in pair_rows(arrays, pairs, source, rows, **labels, method=PAIRED_T):
            both = (arrays.scored[lo] > 0) & (arrays.scored[hi] > 0)
            either = (arrays.scored[lo] > 0) | (arrays.scored[hi] > 0)
            floor = ratio(arrays.n_correct[lo, both], arrays.n_trials[lo, both])
            high = ratio(arrays.n_correct[hi, both], arrays.n_trials[hi, both])
            diff = np.round(high - floor, 12)  # equal differences must tie exactly
            n = len(diff)
            row.update(n_clusters=n, n_unpaired=int(either.sum() - n))
            row["pairing"] = _pairing(n, row["n_unpaired"])
            if n == 0:
                rows.append(row)
                continue
            row.update(
                estimate=float(diff.mean()), sd_diff=float(diff.std(ddof=1)) if n > 1 else np.nan
            )
            if n < MIN_CLUSTERS:
                rows.append(
                    {**row, "note": f"no test: {n} paired scenario(s), fewer than {MIN_CLUSTERS}"}
                )
                continue
            if not diff.std() > 0:
                rows.append({**row, "note": "no test: every scenario's difference is the same"})
                continue
            rows.append({**row, **_effective_t(diff), "note": ""})
    return _frame(rows)


def effective_df(n: int, kurtosis: float) -> float:
    """The paired t's effective degrees of freedom on ``n`` differences of ``kurtosis``
    (Pearson's, 3 for normal): 2 / (2 / (n - 1) + (kurtosis - 3) / n), at most n - 1.

    Examples
    --------
    >>> effective_df(20, 3.0), round(effective_df(20, 5.0), 2)
    (19.0, 9.74)
    """
    return 2.0 / (2.0 / (n - 1) + max(float(kurtosis) - 3.0, 0.0) / n)


def _effective_t(diff: np.ndarray, alpha: float = 0.05) -> dict:
    """``ci_low, ci_high, p, df`` of the paired t on ``diff`` at its effective df, and the
    differences' ``skew_diff`` and ``kurtosis_diff`` (their moment ratios g1 and b2)."""
    n = len(diff)
    deviations = diff - diff.mean()
    squares = deviations**2
    kurtosis = n * (squares**2).sum() / squares.sum() ** 2
    # scipy.stats.skew's biased g1, m3 / m2^1.5, without its per-call argument handling
    # (a millisecond, for each of a large release's hundreds of pairs)
    skewness = (deviations * squares).mean() / squares.mean() ** 1.5
    df = effective_df(n, kurtosis)
    se = diff.std(ddof=1) / np.sqrt(n)
    half = stats.t.isf(alpha / 2, df) * se
    p = 2 * stats.t.sf(abs(diff.mean()) / se, df)
    return {
        "ci_low": float(diff.mean() - half),
        "ci_high": float(diff.mean() + half),
        "p": float(p),
        "df": float(df),
        "skew_diff": float(skewness),
        "kurtosis_diff": float(kurtosis),
    }


_COLUMNS = [
    "source",
    "contrast",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "p",
    "test",
    "method",
    "n_clusters",
    "n_unpaired",
    "pairing",
]


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for column in [*_COLUMNS, "sd_diff", "discordance", "note"]:
        if column not in frame.columns:
            frame[column] = np.nan
    extra = [c for c in frame.columns if c not in _COLUMNS]
    return frame[_COLUMNS + extra]


def newcombe_paired_interval(
    both: int, only_first: int, only_second: int, neither: int, alpha: float = 0.05
) -> tuple[float, float]:
    """Newcombe's hybrid score (square-and-add) interval, his method 10, for
    p_first - p_second of paired binary outcomes from the 2x2 counts: Wilson intervals of the
    two margins combined with the estimated correlation phi, whose numerator ad - bc is
    reduced by n/2 (not below 0) when positive.

    Parameters
    ----------
    both, only_first, only_second, neither : int
        The 2x2 counts of pairs: outcome in both, in the first only, in the second only,
        in neither.
    alpha : float
        1 - the interval's level.

    Returns
    -------
    (float, float)
        The interval's lower and upper bound; NaN bounds when there are no pairs.

    See Also
    --------
    paired_binary_difference : Paired contrasts with Tango's score interval.
    analysis.wilson_interval : The Wilson interval of one proportion.

    Examples
    --------
    >>> low, high = newcombe_paired_interval(59, only_first=6, only_second=16, neither=80)
    >>> round(low, 4), round(high, 4)
    (-0.1186, -0.0046)
    """
    n = both + only_first + only_second + neither
    if n == 0:
        return np.nan, np.nan
    p1, p2 = (both + only_first) / n, (both + only_second) / n
    l1, u1 = proportion_confint(both + only_first, n, alpha=alpha, method="wilson")
    l2, u2 = proportion_confint(both + only_second, n, alpha=alpha, method="wilson")
    margins = (both + only_first) * (only_second + neither) * (both + only_second)
    margins *= only_first + neither
    cross = both * neither - only_first * only_second
    if cross > 0:  # Newcombe's correction of the correlation estimate
        cross = max(cross - n / 2, 0.0)
    phi = cross / np.sqrt(margins) if margins else 0.0
    delta = np.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0))
    epsilon = np.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0))
    return float(p1 - p2 - delta), float(p1 - p2 + epsilon)


def tango_score(delta: float, first_only: int, second_only: int, n: int) -> float:
    """Tango's score statistic for p_first - p_second = ``delta`` of paired binary outcomes:
    (b - c - n delta) / sqrt(n (2 q + delta (1 - delta))), b and c the discordant counts and
    q the maximum-likelihood P(second only) under ``delta`` (the root of a quadratic). At
    delta = 0 it is McNemar's statistic (b - c) / sqrt(b + c)."""
    b, c = first_only, second_only
    a_ = 2 * n
    b_ = -b - c + (2 * n - b + c) * delta
    c_ = -c * delta * (1 - delta)
    q = (np.sqrt(max(b_ * b_ - 4 * a_ * c_, 0.0)) - b_) / (2 * a_)
    variance = n * (2 * q + delta * (1 - delta))
    if variance <= 0:
        return np.inf if b - c - n * delta > 0 else (-np.inf if b - c - n * delta < 0 else 0.0)
    return float((b - c - n * delta) / np.sqrt(variance))


@functools.lru_cache(maxsize=16)  # one level for every pair of a release
def _normal_quantile(p: float) -> float:
    return float(stats.norm.ppf(p))


def tango_interval(
    both: int, first_only: int, second_only: int, neither: int, alpha: float = 0.05
) -> tuple[float, float]:
    """Tango's asymptotic score interval for p_first - p_second of paired binary outcomes
    (every delta whose :func:`tango_score` lies within the normal quantile): it excludes 0
    exactly when McNemar's score test (no continuity correction) gives p < ``alpha``. It has
    width with no discordant pair. NaN bounds when there are no pairs.

    Examples
    --------
    >>> [round(x, 4) for x in tango_interval(59, 6, 16, 80)]
    [-0.124, -0.0054]
    """
    from scipy.optimize import brentq

    n = both + first_only + second_only + neither
    if n == 0:
        return np.nan, np.nan
    z = _normal_quantile(1 - alpha / 2)
    estimate = (first_only - second_only) / n

    def bound(target: float, edge: float) -> float:
        f = lambda d: tango_score(d, first_only, second_only, n) - target  # noqa: E731
        if np.sign(f(edge)) == np.sign(f(estimate)) or f(edge) == 0:
            return edge
        return float(brentq(f, min(edge, estimate), max(edge, estimate), xtol=1e-12))

    return bound(z, -1.0), bound(-z, 1.0)


def mcnemar_score_p(first_only: int, second_only: int) -> float:
    """Two-sided p of McNemar's score test (chi-square, no continuity correction,
    statsmodels); 1 with no discordant pair."""
    if first_only + second_only == 0:
        return 1.0
    table = [[0, first_only], [second_only, 0]]
    return float(mcnemar(table, exact=False, correction=False).pvalue)


def paired_binary_difference(
    cells: pd.DataFrame, metric: str = "modal_accuracy", pairs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Modal accuracy or over-refusal, high minus floor, on scenarios paired by scenario.

    Only pairs where both cells have a modal decision count (for over-refusal: both
    directionally scored on a proceed scenario). The test and the interval share one
    statistic: McNemar's score test (:func:`mcnemar_score_p`) and Tango's score interval
    (:func:`tango_interval`), which excludes 0 exactly when p < .05. Fewer than
    ``MIN_CLUSTERS`` pairs: NaN bounds and a note.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``).
    metric : {"modal_accuracy", "over_refusal"}
        The binary outcome compared: a modal-correct cell, or an over-refusal (a block on a
        proceed scenario).
    pairs : DataFrame, optional
        ``source, model, floor, high``; default :func:`reasoning_pairs_of` ``(cells)``.

    Returns
    -------
    DataFrame
        One row per reasoning pair: the columns of :func:`paired_accuracy_difference`, with
        ``both, only_high, only_floor, neither`` (the 2x2 counts of paired scenarios) and
        ``discordance`` (the discordant share of the pairs).

    See Also
    --------
    paired_accuracy_difference : Mean-trial accuracy, paired by scenario.
    power_table : The difference each contrast could detect.
    newcombe_paired_interval : Another interval from the same 2x2 counts.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=60, seed=6)
    >>> out = paired_binary_difference(cells, "modal_accuracy")
    >>> out[["contrast", "both", "only_high", "only_floor", "neither"]]
                 contrast  both  only_high  only_floor  neither
    0  sim-01: high - off    42         12           1        5
    >>> out[["estimate", "ci_low", "ci_high", "p"]].round(3)
       estimate  ci_low  ci_high      p
    0     0.183   0.079    0.305  0.002
    """
    if metric not in ("modal_accuracy", "over_refusal"):
        raise ValueError(f"metric must be modal_accuracy or over_refusal, not {metric!r}")
    pairs = reasoning_pairs_of(cells) if pairs is None else pairs
    rows = []
    for source, part in by_source(cells):
        arrays = cell_arrays(part)
        eligible = arrays.decided if metric == "modal_accuracy" else arrays.proceed
        outcome = arrays.modal_correct if metric == "modal_accuracy" else arrays.over
        labels = {"metric": metric, "test": MCNEMAR_SCORE, "method": TANGO}
        for row, lo, hi in pair_rows(arrays, pairs, source, rows, **labels):
            both_ok = (eligible[lo] > 0) & (eligible[hi] > 0)
            either = (eligible[lo] > 0) | (eligible[hi] > 0)
            high = outcome[hi, both_ok] > 0
            floor = outcome[lo, both_ok] > 0
            table = {
                "both": int((high & floor).sum()),
                "only_high": int((high & ~floor).sum()),
                "only_floor": int((~high & floor).sum()),
                "neither": int((~high & ~floor).sum()),
            }
            n = int(both_ok.sum())
            row.update(table, n_clusters=n, n_unpaired=int(either.sum() - n))
            row["pairing"] = _pairing(n, row["n_unpaired"])
            if n == 0:
                rows.append(row)
                continue
            discordant = table["only_high"] + table["only_floor"]
            row.update(
                estimate=(table["only_high"] - table["only_floor"]) / n,
                discordance=discordant / n,
            )
            if n < MIN_CLUSTERS:
                note = f"no test: {n} paired scenario(s), fewer than {MIN_CLUSTERS}"
                rows.append({**row, "note": note})
                continue
            low, high_ = tango_interval(*table.values())
            note = "" if discordant else "no discordant pair: the test has no information"
            rows.append(
                {
                    **row,
                    "ci_low": low,
                    "ci_high": high_,
                    "p": mcnemar_score_p(table["only_high"], table["only_floor"]),
                    "note": note,
                }
            )
    return _frame(rows)
