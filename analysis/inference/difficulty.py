"""Pattern difficulty: a logistic model of trial correctness on pattern and condition with
scenarios as clusters; odds ratios of each pattern against a reference pattern."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import sparse
from statsmodels.genmod.families import Binomial

from analysis.inference._arrays import MIN_CLUSTERS
from analysis.inference.clustered import trial_rows

REFERENCE_PATTERN = "calibration_control"
#: The two fits' intervals as a table names them (95% each).
BAYES_METHOD = (
    "logistic mixed model, crossed scenario and condition random intercepts: posterior mode "
    "+/- 1.96 posterior SD (Laplace) on the log-odds scale; priors N(0, 2^2) on the fixed "
    "effects (statsmodels' default fe_p=2) and N(0, 1) on the log random-effect SDs (vcp_p=1)"
)
BAYES_NOTE = "a Bayesian interval under those priors (shrunk toward 1), not a confidence interval"
GEE_METHOD = "GEE logistic, exchangeable within scenario, robust Wald interval"
#: The optimiser of the mixed model's posterior mode (scipy.optimize.minimize) and its
#: options: L-BFGS-B, keeping 30 corrections and stopping only when the posterior no longer
#: improves (``ftol`` 0) or its projected gradient is below ``gtol``. BFGS, statsmodels'
#: default (it had converged wherever Newton-CG did, and more often), updates a dense
#: inverse Hessian of every parameter, random effects included, at each step: cubic in the
#: conditions. ``benchmarks/bench_difficulty.py`` compares the two.
OPTIMIZER = "L-BFGS-B"
OPTIMIZER_OPTIONS: dict[str, float] = {"maxcor": 30, "ftol": 0.0, "gtol": 1e-6}
#: Optimiser iterations of the mixed model's posterior mode (it converges in far fewer).
MAX_ITERATIONS = 5000
#: Largest gradient component (of the log posterior, summed over trials) at which the mixed
#: model's fit counts as converged. An optimiser may report failure ("precision loss") at a
#: mode it cannot refine further in double precision, with a gradient far below this; the
#: gradient is the test.
GRADIENT_TOLERANCE = 1e-3
#: Seed of the mixed model's random starting values (its random effects), so that a fit is
#: the same from run to run.
START_SEED = 0


class _CountWeightedBinomial(Binomial):
    """The binomial family (logit link) with each row standing for ``counts`` trials of the
    same 0/1 outcome: the log-likelihood sums count x row, and the variance divides by the
    count, so that the mixed model's score, ``(y - mu) / (link'(mu) variance(mu))``, is
    count x ``(y - mu)``, the sum of its trials' scores."""

    def __init__(self, counts: np.ndarray) -> None:
        super().__init__()
        self.counts = counts
        per_trial = self.variance
        self.variance = lambda mu: per_trial(mu) / counts

    def loglike(self, endog, mu, var_weights=1.0, freq_weights=1.0, scale=1.0):
        """Sum of count x log P(outcome): the binomial log-likelihood of a 0/1 outcome, whose
        log-gamma terms (three per row in statsmodels' ``loglike_obs``) are all zero; a fifth
        of the mixed model's fit on a generated 224-condition release went to them."""
        return float(np.sum(self.counts * np.log(np.where(endog > 0, mu, 1 - mu))))


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


def _mixed_cells(cells: pd.DataFrame) -> bool:
    """Whether some modal-scored cell has both correct and wrong trials."""
    keep = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    correct, trials = keep["n_correct"].to_numpy(), keep["n_trials"].to_numpy()
    return bool(((correct > 0) & (correct < trials)).any())


def _outcome_rows(data: pd.DataFrame) -> pd.DataFrame:
    """The trial rows collapsed to one row per cell and outcome, ``count`` trials each: the
    trials of a cell share every covariate, so a likelihood weighting each row by its count
    is the per-trial likelihood, on a third or less of the rows."""
    keys = ["scenario_id", "condition", "pattern", "correct"]
    return data.groupby(keys, observed=True).size().rename("count").reset_index()


def _pattern_design(data: pd.DataFrame, reference: str) -> tuple[np.ndarray, list[str]]:
    """An intercept and one indicator per pattern but ``reference`` (sorted), with the
    patterns in column order."""
    patterns = sorted(set(data["pattern"]) - {reference})
    pattern = data["pattern"].to_numpy()
    columns = [np.ones(len(data)), *(pattern == name for name in patterns)]
    return np.column_stack(columns).astype("float64"), patterns


def _condition_design(data: pd.DataFrame) -> np.ndarray:
    """One indicator per condition but the first (sorted), when there are several."""
    condition = data["condition"].to_numpy()
    columns = [condition == name for name in sorted(set(condition))[1:]]
    return np.column_stack(columns).astype("float64") if columns else np.empty((len(data), 0))


def _indicators(*factors: pd.Categorical) -> tuple[sparse.csr_matrix, np.ndarray]:
    """One sparse indicator column per level of each factor, side by side, and the variance
    component (the factor's position) of each column."""
    blocks = [
        sparse.csr_matrix(
            (np.ones(len(f)), (np.arange(len(f)), f.codes)), shape=(len(f), len(f.categories))
        )
        for f in factors
    ]
    component = np.repeat(np.arange(len(factors)), [len(f.categories) for f in factors])
    return sparse.hstack(blocks, format="csr"), component


def pattern_difficulty(
    cells: pd.DataFrame,
    scenarios: pd.DataFrame,
    reference: str = REFERENCE_PATTERN,
    method: str = "bayes",
) -> pd.DataFrame:
    """Odds ratios of a correct trial for each pattern against ``reference``, adjusted for
    condition, with trials clustered within scenarios.

    ``method="bayes"``: a logistic mixed model ``correct ~ pattern`` with crossed random
    intercepts for scenario and condition (statsmodels ``BinomialBayesMixedGLM``, two
    variance components; posterior mode with its Laplace covariance, from a seeded start;
    interval = mode +/- 1.96 sd on the log-odds scale; the variational fit's sds ignore the
    correlation with the random effects and come out far too narrow). Condition as a random
    effect keeps the design narrow, where one fixed indicator each made the fit quadratic in
    the conditions. The trials of a cell share every covariate, so the model is fitted on
    one row per cell and outcome, weighted by its number of trials: the same likelihood on
    a third of the rows or fewer. The fit still grows faster than the rows, since each
    gradient is linear in them and the Laplace covariance takes one gradient per parameter,
    random effects included.
    ``method="gee"``: GEE of ``correct ~ pattern + condition`` (one indicator per
    condition) with an exchangeable working correlation within scenarios (robust Wald
    interval), a population-averaged odds ratio. One source at a time. ``ValueError`` when
    no cell has both correct and wrong trials (deterministic verdicts such as the reference
    policies) or when the mixed model's fit does not converge.

    Returns
    -------
    DataFrame
        ``pattern, estimate`` (odds ratio), ``ci_low, ci_high`` (95%: :data:`BAYES_METHOD`
        or :data:`GEE_METHOD`), ``n_clusters, method, level, reference, note`` (a pattern on
        fewer than ``MIN_CLUSTERS`` scenarios: the note says so, and GEE gives no interval).

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=2, n_scenarios=60, seed=5)
    >>> out = pattern_difficulty(cells, scenarios, method="gee")
    >>> "calibration_control" in set(out["pattern"])
    False
    """
    # statsmodels' models load its formula machinery (about 0.15 s): imported when a fit
    # runs, not by every notebook that imports analysis.inference.
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM
    from statsmodels.genmod.cov_struct import Exchangeable
    from statsmodels.genmod.generalized_estimating_equations import GEE

    if cells["source"].astype(str).nunique() > 1:
        raise ValueError("pattern_difficulty: give one source's cells at a time")
    data = _design(cells, scenarios, reference)
    if not _mixed_cells(cells):
        raise ValueError(
            "every cell's trials agree (deterministic verdicts): a model of trial "
            "correctness has nothing to fit within cells"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "bayes":
            rows = _outcome_rows(data)
            exog, patterns = _pattern_design(rows, reference)
            exog_vc, component = _indicators(
                pd.Categorical(rows["scenario_id"]), pd.Categorical(rows["condition"])
            )
            model = BinomialBayesMixedGLM(
                rows["correct"].to_numpy(dtype="float64"),
                exog,
                exog_vc,
                component,
                vcp_p=1,
                fe_p=2,
            )
            model.family = _CountWeightedBinomial(rows["count"].to_numpy(dtype="float64"))
            options = {**OPTIMIZER_OPTIONS, "maxiter": MAX_ITERATIONS}
            fit = model.fit_map(method=OPTIMIZER, minim_opts=options, rng=START_SEED)
            gradient = float(np.max(np.abs(fit.optim_retvals.jac)))
            if not gradient <= GRADIENT_TOLERANCE:
                raise ValueError(
                    f"the mixed model's fit did not converge: {fit.optim_retvals.message} "
                    f"(largest gradient component {gradient:.2g})"
                )
            mean, sd = fit.fe_mean, np.sqrt(np.diag(fit.cov_params()))[: model.k_fep]
            label = BAYES_METHOD
        elif method == "gee":
            exog, patterns = _pattern_design(data, reference)
            fit = GEE(
                data["correct"].to_numpy(dtype="float64"),
                np.hstack([exog, _condition_design(data)]),
                groups=pd.Categorical(data["scenario_id"]).codes,
                family=Binomial(),
                cov_struct=Exchangeable(),
            ).fit()
            mean, sd = np.asarray(fit.params), np.asarray(fit.bse)
            label = GEE_METHOD
        else:
            raise ValueError(f"method must be 'bayes' or 'gee', not {method!r}")
    clusters = data.groupby("pattern")["scenario_id"].nunique()
    k = len(patterns)
    rows = []
    for pattern, m, s in zip(patterns, mean[1 : 1 + k], sd[1 : 1 + k], strict=True):
        few = int(clusters[pattern]) < MIN_CLUSTERS
        note = BAYES_NOTE if method == "bayes" else ""
        if few:
            note += (
                f"{'; ' if note else ''}{int(clusters[pattern])} scenario(s), fewer than "
                f"{MIN_CLUSTERS}: "
                + ("the prior weighs heavily" if method == "bayes" else "no robust interval")
            )
        drop = few and method == "gee"
        rows.append(
            {
                "pattern": pattern,
                "estimate": float(np.exp(m)),
                "ci_low": np.nan if drop else float(np.exp(m - 1.96 * s)),
                "ci_high": np.nan if drop else float(np.exp(m + 1.96 * s)),
                "n_clusters": int(clusters[pattern]),
                "method": label,
                "level": 0.95,
                "reference": reference,
                "note": note,
            }
        )
    return pd.DataFrame(rows).sort_values("estimate", ignore_index=True)
