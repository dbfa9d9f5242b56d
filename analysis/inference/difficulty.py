"""Pattern difficulty: a logistic model of trial correctness on pattern and condition with
scenarios as clusters; odds ratios of each pattern against a reference pattern."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

from analysis.inference.clustered import trial_rows

REFERENCE_PATTERN = "calibration_control"


def _design(cells: pd.DataFrame, scenarios: pd.DataFrame, reference: str) -> pd.DataFrame:
    data = trial_rows(cells)
    pattern = scenarios.assign(scenario_id=scenarios["scenario_id"].astype(str)).set_index(
        "scenario_id"
    )["boundary_pattern"]
    data["pattern"] = data["scenario_id"].map(pattern.astype(str))
    if data["pattern"].isna().any():
        missing = sorted(data.loc[data["pattern"].isna(), "scenario_id"].unique())[:5]
        raise ValueError(f"scenarios table lacks pattern of scenario id(s) {missing}")
    if reference not in set(data["pattern"]):
        raise ValueError(f"reference pattern {reference!r} has no scored trial")
    return data


def pattern_difficulty(
    cells: pd.DataFrame,
    scenarios: pd.DataFrame,
    reference: str = REFERENCE_PATTERN,
    method: str = "bayes",
) -> pd.DataFrame:
    """Odds ratios of a correct trial for each pattern against ``reference``, adjusted for
    condition, from ``correct ~ pattern + condition`` with scenario clustering.

    ``method="bayes"``: a logistic mixed model with a scenario random intercept
    (statsmodels ``BinomialBayesMixedGLM``, posterior mode with its Laplace covariance;
    interval = mode +/- 1.96 sd on the log-odds scale; the variational fit's sds ignore the
    correlation with the random effects and come out far too narrow). ``method="gee"``: GEE
    with an exchangeable working correlation within scenarios (robust Wald interval), a
    population-averaged odds ratio. One source at a time.

    Returns
    -------
    DataFrame
        ``pattern, estimate`` (odds ratio), ``ci_low, ci_high, n_clusters, method,
        reference``.

    Examples
    --------
    >>> from analysis.inference.simulate import simulate_release
    >>> from analysis.scoring import score_cells
    >>> trials, scenarios, _ = simulate_release(n_models=2, n_scenarios=60, seed=5)
    >>> out = pattern_difficulty(score_cells(trials, scenarios), scenarios, method="gee")
    >>> "calibration_control" in set(out["pattern"])
    False
    """
    if cells["source"].astype(str).nunique() > 1:
        raise ValueError("pattern_difficulty: give one source's cells at a time")
    data = _design(cells, scenarios, reference)
    formula = f"correct ~ C(pattern, Treatment({reference!r}))"
    if data["condition"].nunique() > 1:
        formula += " + C(condition)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "bayes":
            model = BinomialBayesMixedGLM.from_formula(
                formula, {"scenario": "0 + C(scenario_id)"}, data
            )
            fit = model.fit_map()
            sd = np.sqrt(np.diag(fit.cov_params()))[: model.k_fep]
            names, mean = model.exog_names, fit.fe_mean
            label = "logistic mixed model, scenario random intercept (MAP, Laplace interval)"
        elif method == "gee":
            model = sm.GEE.from_formula(
                formula,
                groups="scenario_id",
                data=data,
                family=sm.families.Binomial(),
                cov_struct=sm.cov_struct.Exchangeable(),
            )
            fit = model.fit()
            names, mean, sd = model.exog_names, fit.params.to_numpy(), fit.bse.to_numpy()
            label = "GEE logistic, exchangeable within scenario (robust)"
        else:
            raise ValueError(f"method must be 'bayes' or 'gee', not {method!r}")
    prefix = f"C(pattern, Treatment({reference!r}))[T."
    clusters = data.groupby("pattern")["scenario_id"].nunique()
    rows = []
    for name, m, s in zip(names, mean, sd, strict=True):
        if not name.startswith(prefix):
            continue
        pattern = name[len(prefix) : -1]
        rows.append(
            {
                "pattern": pattern,
                "estimate": float(np.exp(m)),
                "ci_low": float(np.exp(m - 1.96 * s)),
                "ci_high": float(np.exp(m + 1.96 * s)),
                "n_clusters": int(clusters[pattern]),
                "method": label,
                "reference": reference,
            }
        )
    return pd.DataFrame(rows).sort_values("estimate", ignore_index=True)
