"""Reasoning floor against high: paired by scenario from per-trial verdicts, or unpaired
from published counts (labelled as ignoring pairing and clustering)."""

from __future__ import annotations

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
from analysis.inference.detectable import mcnemar_mdd, t_effect
from analysis.inference.two_proportions import SCORE_METHOD, SCORE_TEST, score_difference
from analysis.scoring.leaderboard import floor_and_high, reasoning_level
from analysis.scoring.metrics import reasoning_contrasts

UNPAIRED_METHOD = SCORE_METHOD
PAIRED_T = "paired t interval on per-scenario differences"
PAIRED_T_TEST = "paired t-test (the interval's statistic)"
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
    built on that one statistic: the paired t-test and its t interval (scipy's
    ``ttest_rel``), so the interval excludes 0 exactly when p < .05. Fewer than
    ``MIN_CLUSTERS`` paired scenarios, or every difference alike, gives NaN bounds and a note.

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
        ``source, contrast, metric, estimate, ci_low, ci_high, p, test, method,
        n_clusters, n_unpaired, pairing, sd_diff, note``.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=1)
    >>> out = paired_accuracy_difference(cells)
    >>> out[["contrast", "n_clusters", "pairing"]].to_dict("records")
    [{'contrast': 'sim-01: high - off', 'n_clusters': 40, 'pairing': 'paired'}]
    >>> bool(out.ci_low.iloc[0] <= out.estimate.iloc[0] <= out.ci_high.iloc[0])
    True
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
            test = stats.ttest_rel(high, floor)
            interval = test.confidence_interval(0.95)
            rows.append(
                {
                    **row,
                    "ci_low": float(interval.low),
                    "ci_high": float(interval.high),
                    "p": float(test.pvalue),
                    "note": "",
                }
            )
    return _frame(rows)


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
    z = stats.norm.ppf(1 - alpha / 2)
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


def unpaired_reasoning(conditions: pd.DataFrame) -> pd.DataFrame:
    """High minus floor from published per-condition counts only: the Miettinen-Nurminen
    score test and the interval inverting it (:func:`.two_proportions.score_difference`:
    ``p < .05`` exactly when the 95% interval excludes 0), both treating every trial (cell)
    as independent, so ignoring the pairing by scenario and the clustering in scenarios.

    Parameters
    ----------
    conditions : DataFrame
        Condition counts with ``model, reasoning_level`` (``analysis.scoring.leaderboard``).

    Returns
    -------
    DataFrame
        One row per (model, metric) for mean-trial accuracy and over-refusal; ``model``
        names the contrast's model.

    Examples
    --------
    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"model": ["m", "m"], "reasoning": ["off", "high"],
    ...     "reasoning_level": ["floor", "high"], "n_trials_correct": [50, 70],
    ...     "n_trials": [100, 100], "n_over_refusals": [5, 5],
    ...     "n_proceed_opportunities": [40, 40], "n_modal_correct": [10, 14], "n_cells": [20, 20],
    ...     "n_under_refusals": [1, 1], "n_hold_opportunities": [10, 10]})
    >>> out = unpaired_reasoning(conditions)
    >>> out["metric"].tolist(), out["estimate"].round(2).tolist()
    (['mean_trial_accuracy', 'over_refusal'], [0.2, 0.0])
    >>> out[["p", "ci_low", "ci_high"]].round(4).values.tolist()
    [[0.004, 0.0643, 0.3288], [1.0, -0.1572, 0.1572]]
    """
    contrasts = reasoning_contrasts(conditions)
    rows, counts = [], []
    for r in contrasts.itertuples(index=False):
        for metric, k, n in (
            ("mean_trial_accuracy", "n_trials_correct", "n_trials"),
            ("over_refusal", "n_over_refusals", "n_proceed_opportunities"),
        ):
            counts.append([getattr(r, f"{k}_high"), getattr(r, f"{n}_high")])
            counts[-1] += [getattr(r, f"{k}_floor"), getattr(r, f"{n}_floor")]
            rows.append(
                {
                    "source": "published",
                    "contrast": f"{r.model}: {r.reasoning_high} - {r.reasoning_floor}",
                    "model": r.model,
                    "metric": metric,
                    "estimate": getattr(r, f"{metric}_diff"),
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "p": np.nan,
                    "test": SCORE_TEST,
                    "method": UNPAIRED_METHOD,
                    "n_clusters": np.nan,
                    "n_unpaired": np.nan,
                    "pairing": "unpaired: published aggregate counts only",
                }
            )
    counts = np.asarray(counts, dtype="float64").reshape(-1, 4)
    tested = np.flatnonzero((counts[:, 1] > 0) & (counts[:, 3] > 0))
    if len(tested):  # every contrast in one vectorised call
        p, low, high = (np.atleast_1d(v) for v in score_difference(*counts[tested].T))
        for i, at in enumerate(tested):
            rows[at].update(p=float(p[i]), ci_low=float(low[i]), ci_high=float(high[i]))
    return _frame(rows)


def minimum_detectable_difference(
    n_pairs: int,
    *,
    discordance: float | None = None,
    sd_diff: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """The smallest paired difference detectable with ``power`` at two-sided ``alpha``.

    With ``discordance`` (share of discordant pairs, binary outcomes): Connor's normal
    approximation to McNemar's test, n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2,
    solved for d (:func:`analysis.inference.detectable.mcnemar_mdd`). With ``sd_diff``
    (continuous per-scenario differences): the paired t-test's detectable effect size
    (:func:`analysis.inference.detectable.t_effect`) times ``sd_diff``. NaN with fewer
    than two pairs, no discordance, or no difference up to the discordance detectable.

    Examples
    --------
    >>> round(minimum_detectable_difference(100, sd_diff=1.0), 3)
    0.283
    >>> round(minimum_detectable_difference(100, discordance=0.2), 3)
    0.124
    """
    if n_pairs < 2:
        return np.nan
    if sd_diff is not None:
        return t_effect(int(n_pairs), alpha, power) * float(sd_diff)
    if discordance is None or not discordance > 0:
        return np.nan
    return mcnemar_mdd(int(n_pairs), min(float(discordance), 1.0), alpha, power)


def power_table(paired: pd.DataFrame, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """Per paired contrast: the minimum detectable difference at its number of scenarios
    given the observed discordance (binary metrics) or spread of differences (mean-trial).

    Parameters
    ----------
    paired : DataFrame
        Paired contrasts, as :func:`paired_accuracy_difference` and
        :func:`paired_binary_difference` return them (``source, contrast, metric,
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
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=60, seed=6)
    >>> tables = [paired_accuracy_difference(cells), paired_binary_difference(cells)]
    >>> paired = pd.concat(tables)
    >>> power_table(paired)[["metric", "basis", "estimate", "mdd"]].round(3)
                    metric                    basis  estimate    mdd
    0  mean_trial_accuracy  sd of differences 0.287     0.147  0.106
    1       modal_accuracy        discordance 0.217     0.183  0.165
    """
    rows = []
    for r in paired.itertuples(index=False):
        n = int(r.n_clusters) if pd.notna(r.n_clusters) else 0
        binary = r.metric != "mean_trial_accuracy"
        mdd = minimum_detectable_difference(
            n,
            discordance=r.discordance if binary and pd.notna(r.discordance) else None,
            sd_diff=None if binary or pd.isna(r.sd_diff) else r.sd_diff,
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
                "method": "Connor (McNemar, normal approx.)"
                if binary
                else "paired t (statsmodels)",
            }
        )
    return pd.DataFrame(rows)
