"""Scenario-clustered accuracy per condition: Clopper-Pearson at the scenario-clustered
effective size, GEE with an interval from its robust variance, ICC and design effect. The
pooled quantities (Table 3, mirror gap, headline asymmetry) are in
:mod:`analysis.inference.pooled`.

Estimand (:data:`~analysis.inference._arrays.ESTIMAND`): the clustered intervals are about a
population of scenarios like these (a new draw of scenarios, run again); the Wilson interval
beside them treats every trial (or cell) as an independent draw, which fits only these
scenarios held fixed. Give ``strata`` (the corpus's construction patterns, say) when the
release's mix of them is fixed by design and a new draw would keep it; leave it out when
the mix itself stands for a population.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inference._arrays import (
    EFFECTIVE_SIZE_CP,
    ESTIMAND,
    MIN_CLUSTERS,
    N_BOOT,
    SEED,
    by_source,
    cell_arrays,
    effective_size_row,
)
from analysis.scoring.intervals import wilson_interval


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
    """Mean-trial accuracy per condition with a scenario-clustered 95% interval
    (Clopper-Pearson at the effective size), the Wilson interval on trials beside it, the
    ICC of trials within scenarios and the design effect.

    The interval is :func:`~analysis.inference._arrays.effective_size_interval` on each
    condition's per-scenario counts, the method ``rates(ci="cluster")`` uses. A percentile
    scenario bootstrap, this function's interval before, covered 78-91% on simulated
    releases of 10 or 20 scenarios and at rates near 0 or 1 with a high intraclass
    correlation (docs/inference.md); this one covers at least 94% across that grid.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``), one or more sources; a
        source's provider-filtered cells are left out.
    n_boot, seed : int
        Kept so that existing calls run: the interval does not resample.
    strata : Series, optional
        A label per scenario id (e.g. its ``boundary_pattern``) when the release's mix of
        those labels is fixed by design: the variance is then the stratified one (within
        each label), which is smaller when the labels differ in accuracy. Default: no strata.

    Returns
    -------
    DataFrame
        One row per source and condition: ``source, condition, estimate, ci_low, ci_high,
        wilson_low, wilson_high, icc, design_effect, n_trials, n_clusters, method, note,
        estimand``. ``estimate`` is correct trials over trials; ``ci_low, ci_high`` the
        clustered 95% interval, named in ``method`` (NaN with a ``note`` below
        :data:`~analysis.inference._arrays.MIN_CLUSTERS` scenarios; at a rate of 0 or 1
        each scenario counted once); ``wilson_low, wilson_high`` the Wilson interval
        treating every trial as independent (about these scenarios held fixed); ``icc`` and
        ``design_effect`` by :func:`anova_icc`; ``n_clusters`` the scenarios scored.

    See Also
    --------
    gee_accuracy : the same accuracy by GEE, its interval from the robust variance.
    analysis.exploring.rates : the same interval (``ci="cluster"``) for any grouping.
    analysis.inference._arrays.effective_size_interval : the interval itself.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=30, seed=2)
    >>> out = clustered_accuracy(cells)
    >>> out[["condition", "estimate", "ci_low", "ci_high", "n_clusters"]].round(3)
           condition  estimate  ci_low  ci_high  n_clusters
    0  sim-01 (high)     0.613   0.476    0.739          30
    1   sim-01 (off)     0.627   0.460    0.774          30
    >>> out["method"].iloc[0]
    'Clopper-Pearson at the scenario-clustered effective size (Korn-Graubard, Satterthwaite df)'
    >>> bool((out.ci_high - out.ci_low > out.wilson_high - out.wilson_low).all())
    True
    """
    rows = []
    for source, part in by_source(cells):
        arrays = cell_arrays(part)
        labels, method = None, EFFECTIVE_SIZE_CP
        if strata is not None:
            labels = _labels_of(strata, arrays.scenarios)
            method += ", stratified variance"
        for j, condition in enumerate(arrays.conditions):
            k, n = arrays.n_correct[j], arrays.n_trials[j] * (arrays.scored[j] > 0)
            total = n.sum()
            w_low, w_high = wilson_interval(k.sum(), total) if total else (np.nan, np.nan)
            icc, deff = anova_icc(k, n)
            rows.append(
                {
                    "source": source,
                    "condition": condition,
                    "estimate": k.sum() / total if total else np.nan,
                    **effective_size_row(k, n, strata=labels, method=method),
                    "wilson_low": w_low,
                    "wilson_high": w_high,
                    "icc": icc,
                    "design_effect": deff,
                    "n_trials": int(total),
                    "n_clusters": int((arrays.scored[j] > 0).sum()),
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


#: :func:`gee_accuracy`'s method, as its rows name it.
GEE_METHOD = (
    "GEE binomial, exchangeable; Clopper-Pearson at the effective size of its robust "
    "variance (Korn-Graubard, Satterthwaite df)"
)


def gee_accuracy(cells: pd.DataFrame) -> pd.DataFrame:
    """Mean-trial accuracy per condition by GEE (binomial, logit link, exchangeable working
    correlation within scenarios; :func:`exchangeable_gee`, which restates statsmodels' fit
    for counts), with a 95% interval from its robust variance.

    An intercept-only GEE's estimate is a weighted rate, sum w c / sum w n over scenarios
    with weight w = 1 / (1 + (n - 1) rho) (equal weights when every scenario has as many
    trials), and its robust (sandwich) variance is that rate's linearised variance. The
    interval is Clopper-Pearson at the effective size of that variance
    (:func:`~analysis.inference._arrays.effective_size_interval` on the weighted counts):
    the back-transformed Wald interval of the intercept, this function's interval before,
    covered 74-91% on simulated releases of 10 or 20 scenarios and at a rate near 0.01
    (docs/inference.md). A condition whose trials are all correct or all wrong has no GEE
    fit: its interval counts each scenario once, and ``note`` says so.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``), one or more sources;
        provider-filtered cells are left out.

    Returns
    -------
    DataFrame
        One row per source and condition: ``source, condition, estimate, ci_low, ci_high,
        icc, method, n_clusters, note``. ``estimate`` is the GEE's fitted accuracy (correct
        trials over trials without a fit), ``icc`` the fitted exchangeable correlation
        (NaN without a fit); NaN bounds with a ``note`` below
        :data:`~analysis.inference._arrays.MIN_CLUSTERS` scenarios.

    See Also
    --------
    clustered_accuracy : the unweighted rate with the same kind of interval.
    exchangeable_gee : the fit.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=30, seed=2)
    >>> out = gee_accuracy(cells)
    >>> out[["condition", "estimate", "ci_low", "ci_high", "icc"]].round(3)
           condition  estimate  ci_low  ci_high    icc
    0  sim-01 (high)     0.613   0.476    0.739  0.268
    1   sim-01 (off)     0.627   0.460    0.774  0.528
    """
    rows = []
    for source, part in by_source(cells):
        arrays = cell_arrays(part)
        n = arrays.n_trials * (arrays.scored > 0)
        c = arrays.n_correct * (arrays.scored > 0)
        beta, _, rho = exchangeable_gee(c, n)
        for j, condition in enumerate(arrays.conditions):
            total = n[j].sum()
            row = {
                "source": source,
                "condition": condition,
                "estimate": c[j].sum() / total if total else np.nan,
                "icc": np.nan,
                "n_clusters": int((n[j] > 0).sum()),
            }
            if np.isnan(beta[j]):  # all trials alike (or none): each scenario counted once
                interval = effective_size_row(c[j], n[j], method=GEE_METHOD)
                if total and row["n_clusters"] >= MIN_CLUSTERS:
                    interval["note"] = "all trials alike: no GEE fit; " + interval["note"]
                rows.append({**row, **interval})
                continue
            weight = 1 / (1 + (n[j] - 1) * rho[j])
            interval = effective_size_row(weight * c[j], weight * n[j], total, method=GEE_METHOD)
            rows.append(
                {**row, "estimate": 1 / (1 + np.exp(-beta[j])), "icc": float(rho[j]), **interval}
            )
    columns = ["source", "condition", "estimate", "ci_low", "ci_high", "icc", "method"]
    return pd.DataFrame(rows).reindex(columns=[*columns, "n_clusters", "note"])
