"""Scenario-clustered intervals of per-condition mean-trial accuracy (cluster bootstrap, GEE),
the ICC and design effect; the pooled quantities are in :mod:`analysis.inference.pooled`.

Estimand (:data:`~analysis.inference._arrays.ESTIMAND`): the clustered intervals are about a
population of scenarios like these (a new draw of scenarios, run again); the Wilson interval
beside them treats every trial (or cell) as an independent draw, which fits only these
scenarios held fixed. Resample within the corpus's construction patterns (``strata``) when
the release's pattern mix is fixed by design and a new draw would keep it; resample freely
when the mix itself stands for a population.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inference._arrays import (
    ESTIMAND,
    MIN_CLUSTERS,
    N_BOOT,
    SEED,
    accuracy_replicates,
    by_source,
    cell_arrays,
    guarded_interval,
    percentile_interval,
)
from analysis.scoring.intervals import wilson_interval

CLUSTER_BOOTSTRAP = "scenario-cluster bootstrap (percentile)"
#: How the rate ratio's resamples are read (:func:`~analysis.inference._arrays.ratio_interval`).
RATIO_RESAMPLES = "; every resample kept (no under-refusal: +inf), order statistics"


def anova_icc(n_correct: np.ndarray, n_trials: np.ndarray) -> tuple[float, float]:
    """(ICC, design effect) of binary trials clustered in cells, by one-way ANOVA.

    The average cluster size is Donner's n0 and the design effect is 1 + (n0 - 1) ICC.

    Parameters
    ----------
    n_correct, n_trials : ndarray
        Correct trials and trials per cluster (a cell: one condition on one scenario), one
        entry each; clusters with no trial are ignored.

    Returns
    -------
    (float, float)
        The ICC (negative when clusters vary less than independent trials would) and the
        design effect; NaN both with fewer than two clusters or no variation at all.

    See Also
    --------
    clustered_accuracy : Per condition, its ICC and design effect beside its interval.
    design_effect_bound : The smallest design effect published counts allow.
    trial_rows : Cells as one binary row per trial, for a trial-level model.

    Examples
    --------
    >>> import numpy as np
    >>> icc, deff = anova_icc(np.array([5, 0, 5, 0]), np.array([5, 5, 5, 5]))
    >>> float(icc), float(deff)
    (1.0, 5.0)
    >>> icc, deff = anova_icc(np.array([5, 4, 1, 0, 3]), np.array([5, 5, 5, 5, 5]))
    >>> round(icc, 3), round(deff, 3)
    (0.507, 3.028)
    """
    keep = n_trials > 0
    c, n = n_correct[keep].astype("float64"), n_trials[keep].astype("float64")
    k, total = len(n), n.sum()
    if k < 2 or total <= k:
        return np.nan, np.nan
    mean = c.sum() / total
    msb = (n * (c / n - mean) ** 2).sum() / (k - 1)
    msw = (c - c**2 / n).sum() / (total - k)
    n0 = (total - (n**2).sum() / total) / (k - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator <= 0:
        return np.nan, np.nan
    icc = (msb - msw) / denominator
    return float(icc), float(1 + (n0 - 1) * icc)


#: The columns :func:`clustered_accuracy` returns.
CLUSTERED_COLUMNS = [
    "source",
    "condition",
    "estimate",
    "ci_low",
    "ci_high",
    "wilson_low",
    "wilson_high",
    "icc",
    "design_effect",
    "n_trials",
    "n_clusters",
    "method",
    "note",
    "estimand",
]


def clustered_accuracy(
    cells: pd.DataFrame,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    strata: pd.Series | None = None,
) -> pd.DataFrame:
    """Mean-trial accuracy per condition with a scenario-cluster bootstrap interval, the
    Wilson interval on trials beside it, the ICC of trials within scenarios and the design
    effect.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``); provider-filtered cells are left out.
    n_boot, seed : int
        Resamples and seed (one set of scenario resamples per source, shared by conditions).
    strata : Series, optional
        A label per scenario id (e.g. its ``boundary_pattern``): scenarios are resampled
        within each label, keeping the corpus's mix (default: resampled freely).

    Returns
    -------
    DataFrame
        ``source, condition, estimate, ci_low, ci_high, wilson_low, wilson_high, icc,
        design_effect, n_trials, n_clusters, method, note, estimand``; fewer than
        ``MIN_CLUSTERS`` scenarios or a bootstrap without spread: see
        :func:`~analysis.inference._arrays.guarded_interval`.

    See Also
    --------
    gee_accuracy : The same quantity by GEE with an exchangeable working correlation.
    anova_icc : The ICC and design effect of each row.
    analysis.rates : Rates by any column, Clopper-Pearson at the clustered effective size.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=30, seed=2)
    >>> out = clustered_accuracy(cells)
    >>> out["condition"].tolist(), out["n_clusters"].tolist()
    (['sim-01 (high)', 'sim-01 (off)'], [30, 30])
    >>> bool((out.ci_high - out.ci_low > out.wilson_high - out.wilson_low).all())
    True
    """
    rows = []
    for offset, (source, part) in enumerate(by_source(cells)):
        arrays = cell_arrays(part)
        labels = None
        method = CLUSTER_BOOTSTRAP
        if strata is not None:
            labels = _labels_of(strata, arrays.scenarios)
            method += ", within strata"
        replicates = accuracy_replicates(arrays, n_boot, seed + offset, labels)
        low, high = percentile_interval(replicates)
        for j, condition in enumerate(arrays.conditions):
            k, n = arrays.n_correct[j].sum(), arrays.n_trials[j].sum()
            w_low, w_high = wilson_interval(k, n) if n else (np.nan, np.nan)
            icc, deff = anova_icc(arrays.n_correct[j], arrays.n_trials[j])
            clusters = int((arrays.scored[j] > 0).sum())
            estimate = k / n if n else np.nan
            rows.append(
                {
                    "source": source,
                    "condition": condition,
                    "estimate": estimate,
                    **guarded_interval(low[j], high[j], estimate, clusters, method),
                    "wilson_low": w_low,
                    "wilson_high": w_high,
                    "icc": icc,
                    "design_effect": deff,
                    "n_trials": int(n),
                    "n_clusters": clusters,
                    "estimand": ESTIMAND,
                }
            )
    return pd.DataFrame(rows, columns=CLUSTERED_COLUMNS)


def _labels_of(strata: pd.Series, scenarios: list[str]) -> np.ndarray:
    """``strata``'s label of each scenario id, in order; a scenario without one is an error."""
    labels = strata.copy()
    labels.index = labels.index.astype(str)
    missing = sorted(set(scenarios) - set(labels.index))
    if missing:
        raise ValueError(f"strata lack scenario id(s) {missing[:5]}")
    return labels.loc[scenarios].astype(str).to_numpy()


def trial_rows(cells: pd.DataFrame) -> pd.DataFrame:
    """One binary row per trial of each modal-scored cell (``correct`` 0/1), from the cell
    counts: null trials are wrong; filtered cells are left out.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.score_cells``): ``source, scenario_id, condition,
        n_trials, n_correct, modal_scored``.

    Returns
    -------
    DataFrame
        ``source, scenario_id, condition, correct``: one row per trial, a cell's correct
        trials first.

    See Also
    --------
    pattern_difficulty : A mixed model fitted to these rows.
    anova_icc : The ICC of the trials within cells.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"source": "run", "scenario_id": ["s1", "s2", "s3"],
    ...     "condition": "m (off)", "n_trials": [3, 2, 4], "n_correct": [2, 0, 4],
    ...     "modal_scored": [True, True, False]})
    >>> trial_rows(cells)
      source scenario_id condition  correct
    0    run          s1   m (off)        1
    1    run          s1   m (off)        1
    2    run          s1   m (off)        0
    3    run          s2   m (off)        0
    4    run          s2   m (off)        0
    """
    keep = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    n = keep["n_trials"].to_numpy(dtype="int64")
    c = keep["n_correct"].to_numpy(dtype="int64")
    position = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
    out = pd.DataFrame(
        {
            column: np.repeat(keep[column].astype(str).to_numpy(), n)
            for column in ("source", "scenario_id", "condition")
        }
    )
    out["correct"] = (position < np.repeat(c, n)).astype("int64")
    return out


def exchangeable_gee(
    n_correct: np.ndarray, n_trials: np.ndarray, ctol: float = 1e-6, max_iterations: int = 60
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intercept-only GEE, binomial with logit link and an exchangeable working correlation
    within clusters, for every row of ``n_correct`` / ``n_trials`` (conditions x clusters,
    0 trials where a cluster is absent) at once: (intercept, robust standard error, fitted
    correlation) per row.

    The estimator and its iteration are statsmodels' ``GEE(...).fit()`` (a Fisher scoring
    step of the mean, then the moment update of the correlation, from 0, until the score's
    norm is below ``ctol``), written for counts: the trials of a cluster share their
    covariates, so each step needs only the cluster's correct count and size. The tests
    hold it to statsmodels. Rows whose trials are all alike give NaN.
    """
    c, n = np.asarray(n_correct, dtype="float64"), np.asarray(n_trials, dtype="float64")
    total = n.sum(axis=1)
    with np.errstate(all="ignore"):
        mean = c.sum(axis=1) / total
        fit = (mean > 0) & (mean < 1)
        beta = np.log(mean / (1 - mean))
        rho = np.zeros(len(c))
        pairs = (n * (n - 1) / 2).sum(axis=1)
        done = ~fit
        for iteration in range(max_iterations):
            mu = 1 / (1 + np.exp(-beta))
            weight = 1 / (1 + (n - 1) * rho[:, None])
            score = (weight * (c - n * mu[:, None])).sum(axis=1)
            information = mu * (1 - mu) * (weight * n).sum(axis=1)
            beta = np.where(done, beta, beta + score / information)
            done |= (np.abs(score) < ctol) & (iteration > 0)
            if done.all():
                break
            mu = 1 / (1 + np.exp(-beta))
            variance = (mu * (1 - mu))[:, None]
            squares = (c * (1 - mu[:, None]) ** 2 + (n - c) * mu[:, None] ** 2) / variance
            sums = (c - n * mu[:, None]) ** 2 / variance
            scale = squares.sum(axis=1) / (total - 1)
            updated = ((sums - squares) / 2).sum(axis=1) / scale / (pairs - 1)
            rho = np.where(done, rho, updated)
        mu = 1 / (1 + np.exp(-beta))
        weight = 1 / (1 + (n - 1) * rho[:, None])
        meat = (weight**2 * (c - n * mu[:, None]) ** 2).sum(axis=1)
        se = np.sqrt(meat) / (mu * (1 - mu) * (weight * n).sum(axis=1))
    nan = np.full(len(c), np.nan)
    return np.where(fit, beta, nan), np.where(fit, se, nan), np.where(fit, rho, nan)


def gee_accuracy(cells: pd.DataFrame) -> pd.DataFrame:
    """Mean-trial accuracy per condition by GEE (binomial, logit link, exchangeable working
    correlation within scenarios, robust standard errors; :func:`exchangeable_gee`, which
    restates statsmodels' fit for counts).

    The interval is the back-transformed Wald interval of the intercept; ``icc`` is the
    fitted exchangeable correlation. A condition whose trials are all correct or all wrong
    has no GEE fit (``note`` says so).

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.score_cells``): one row per (scenario, condition) with
        ``source, scenario_id, condition, n_trials, n_correct, modal_scored``;
        provider-filtered cells are left out.

    Returns
    -------
    DataFrame
        One row per (source, condition): ``source, condition, estimate, ci_low, ci_high,
        icc, method, n_clusters, note``. ``estimate`` is the GEE's back-transformed
        intercept (the pooled share of correct trials), ``icc`` the fitted exchangeable
        correlation; fewer than ``MIN_CLUSTERS`` scenarios or trials all alike give NaN
        bounds and a ``note``.

    See Also
    --------
    clustered_accuracy : The same quantity by a scenario-cluster bootstrap, with the ICC.
    analysis.rates : Rates by any column, Clopper-Pearson at the clustered effective size.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=30, seed=2)
    >>> out = gee_accuracy(cells)
    >>> out[["condition", "estimate", "ci_low", "ci_high", "icc"]].round(3)
           condition  estimate  ci_low  ci_high    icc
    0  sim-01 (high)     0.613   0.497    0.718  0.268
    1   sim-01 (off)     0.627   0.483    0.751  0.528
    >>> out["method"].iloc[0]
    'GEE binomial, exchangeable (robust)'
    """
    rows = []
    for source, part in by_source(cells):
        arrays = cell_arrays(part)
        n = arrays.n_trials * (arrays.scored > 0)
        beta, se, rho = exchangeable_gee(arrays.n_correct * (arrays.scored > 0), n)
        for j, condition in enumerate(arrays.conditions):
            k, total = arrays.n_correct[j][n[j] > 0].sum(), n[j].sum()
            row = {
                "source": source,
                "condition": condition,
                "estimate": k / total if total else np.nan,
                "method": "GEE binomial, exchangeable (robust)",
                "n_clusters": int((n[j] > 0).sum()),
                "note": "",
            }
            if np.isnan(beta[j]):
                rows.append({**row, "note": "all trials alike: no GEE fit"})
                continue
            if row["n_clusters"] < MIN_CLUSTERS:
                note = f"no interval: {row['n_clusters']} scenario(s), fewer than {MIN_CLUSTERS}"
                rows.append({**row, "note": note})
                continue
            b = np.array([beta[j], beta[j] - 1.96 * se[j], beta[j] + 1.96 * se[j]])
            expit = 1 / (1 + np.exp(-b))
            rows.append(
                {
                    **row,
                    "estimate": expit[0],
                    "ci_low": expit[1],
                    "ci_high": expit[2],
                    "icc": float(rho[j]),
                }
            )
    columns = ["source", "condition", "estimate", "ci_low", "ci_high", "icc", "method"]
    return pd.DataFrame(rows).reindex(columns=[*columns, "n_clusters", "note"])
