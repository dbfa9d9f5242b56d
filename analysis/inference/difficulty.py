"""Pattern difficulty: a logistic model of trial correctness on pattern and condition with
scenarios as clusters; odds ratios of each pattern against a reference pattern."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import OptimizeResult, minimize
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
#: options: a trust-region Newton method (GLTR's Krylov subproblem) on the analytic sparse
#: Hessian of :func:`_negative_hessian`, stopping when the gradient is below ``gtol``. The
#: log posterior is not concave in the random effects and their log SDs jointly, which the
#: trust region handles. Quasi-Newton methods need many more steps as conditions grow:
#: L-BFGS-B took 373 evaluations on 1,000 conditions, where this takes about 20, and
#: stopped further from the mode. ``benchmarks/bench_difficulty.py`` compares optimisers.
OPTIMIZER = "trust-krylov"
OPTIMIZER_OPTIONS: dict[str, float] = {"gtol": 1e-8}
#: The scipy methods that take the Hessian as products (``hessp``).
HESSIAN_METHODS = frozenset({"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"})
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
    """One row per trial of each modal-scored cell (:func:`trial_rows`), with its pattern."""
    return _with_patterns(trial_rows(cells), scenarios, reference)


def _outcome_rows(cells: pd.DataFrame, scenarios: pd.DataFrame, reference: str) -> pd.DataFrame:
    """The rows of :func:`_design` collapsed to one row per cell and outcome, ``count``
    trials each, in the order of their keys, made from the cells' counts: the trials of a
    cell share every covariate, so a likelihood weighting each row by its count is the
    per-trial likelihood, on a third or less of the rows."""
    keep = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    n = keep["n_trials"].to_numpy(dtype="int64")
    c = keep["n_correct"].to_numpy(dtype="int64")
    both = {
        column: np.tile(keep[column].astype(str).to_numpy(), 2)
        for column in ("scenario_id", "condition")
    }
    rows = pd.DataFrame(
        {**both, "correct": np.repeat(np.array([0, 1]), len(keep)), "count": np.r_[n - c, c]}
    )
    rows = rows.loc[rows["count"].to_numpy() > 0]
    keys = ["scenario_id", "condition", "correct"]
    rows = rows.groupby(keys, observed=True)["count"].sum().reset_index()
    return _with_patterns(rows, scenarios, reference)[
        ["scenario_id", "condition", "pattern", "correct", "count"]
    ]


def _with_patterns(rows: pd.DataFrame, scenarios: pd.DataFrame, reference: str) -> pd.DataFrame:
    """``rows`` with each scenario's ``pattern``; ``ValueError`` when a scenario has none or
    ``reference`` is absent."""
    pattern = scenarios.assign(scenario_id=scenarios["scenario_id"].astype(str)).set_index(
        "scenario_id"
    )["boundary_pattern"]
    rows["pattern"] = rows["scenario_id"].map(pattern.astype(str))
    if rows["pattern"].isna().any():
        missing = sorted(rows.loc[rows["pattern"].isna(), "scenario_id"].unique())[:5]
        raise ValueError(f"scenarios table lacks pattern of scenario id(s) {missing}")
    if reference not in set(rows["pattern"].tolist()):
        raise ValueError(f"reference pattern {reference!r} has no scored trial")
    return rows


def _mixed_cells(cells: pd.DataFrame) -> bool:
    """Whether some modal-scored cell has both correct and wrong trials."""
    keep = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    correct, trials = keep["n_correct"].to_numpy(), keep["n_trials"].to_numpy()
    return bool(((correct > 0) & (correct < trials)).any())


def _pattern_design(data: pd.DataFrame, reference: str) -> tuple[np.ndarray, list[str]]:
    """An intercept and one indicator per pattern but ``reference`` (sorted), with the
    patterns in column order."""
    patterns = sorted(set(data["pattern"].tolist()) - {reference})
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


def _negative_log_posterior(model):
    """The negative of statsmodels' ``logposterior`` and of its ``logposterior_grad``
    together, as ``(value, gradient)``: the same operations in the same order (so the same
    values, bit for bit), the linear predictor and the mean computed once for both."""
    k_fe, k_vcp = model.k_fep, model.k_vcp
    family, endog, exog, exog_vc, ident = (
        model.family,
        model.endog,
        model.exog,
        model.exog_vc,
        model.ident,
    )
    exog_vc_t = exog_vc.transpose()

    def value_and_gradient(params: np.ndarray) -> tuple[float, np.ndarray]:
        fep, vcp, vc = params[:k_fe], params[k_fe : k_fe + k_vcp], params[k_fe + k_vcp :]
        lp = 0
        lp += np.dot(exog, fep)
        lp += exog_vc.dot(vc)
        mu = family.link.inverse(lp)
        ll = family.loglike(endog, mu)
        vcp0 = vcp[ident]
        s = np.exp(vcp0)
        ll -= 0.5 * np.sum(vc**2 / s**2) + np.sum(vcp0)
        ll -= 0.5 * np.sum(vcp**2 / model.vcp_p**2)
        ll -= 0.5 * np.sum(fep**2 / model.fe_p**2)
        score_factor = (endog - mu) / family.link.deriv(mu)
        score_factor /= family.variance(mu)
        fe_grad = np.dot(score_factor, exog)
        vc_grad = exog_vc_t.dot(score_factor)
        vcp_grad = np.bincount(ident, weights=vc**2 / s**2 - 1)
        vc_grad -= vc / s**2
        vcp_grad -= vcp / model.vcp_p**2
        fe_grad -= fep / model.fe_p**2
        return -ll, -np.concatenate([fe_grad, vcp_grad, vc_grad])

    return value_and_gradient


def _posterior_mode(model) -> OptimizeResult:
    """The mixed model's posterior mode from statsmodels' ``fit_map`` start (zero fixed
    effects, log SDs of one, random effects drawn from :data:`START_SEED`): the negative
    log posterior minimised by :data:`OPTIMIZER`, with Hessian products from
    :func:`_negative_hessian` where the method takes them."""
    rng = np.random.default_rng(START_SEED)  # statsmodels' check_random_state(START_SEED)
    start = np.concatenate(
        [np.zeros(model.k_fep), np.ones(model.k_vcp), rng.normal(size=model.k_vc)]
    )
    extra = {}
    if OPTIMIZER.lower() in HESSIAN_METHODS:
        extra["hessp"] = _hessian_products(model)
    return minimize(
        _negative_log_posterior(model),
        start,
        method=OPTIMIZER,
        jac=True,
        options={**OPTIMIZER_OPTIONS, "maxiter": MAX_ITERATIONS},
        **extra,
    )


def _hessian_products(model):
    """``hessp(params, vector)``: the negative Hessian at ``params`` times ``vector``, the
    Hessian built once per point (a Newton step takes several products at one point)."""
    last: dict[str, object] = {}

    def hessp(params: np.ndarray, vector: np.ndarray) -> np.ndarray:
        key = params.tobytes()
        if last.get("key") != key:
            last["key"], last["hessian"] = key, _negative_hessian(model, params)
        return last["hessian"] @ vector

    return hessp


def _whole_design(model) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """The model's whole design ``[X Z]`` and its transpose, both CSR, made once per model
    (a Newton step builds the Hessian once at each point)."""
    made = model.__dict__.get("_whole_design")
    if made is None:
        design = sparse.hstack([sparse.csr_matrix(model.exog), model.exog_vc], format="csr")
        made = model.__dict__["_whole_design"] = (design, design.T.tocsr())
    return made


def _negative_hessian(model, params: np.ndarray) -> sparse.csr_matrix:
    """The negative Hessian of the mixed model's log posterior (statsmodels'
    ``logposterior``) at ``params`` (fixed effects, log random-effect SDs, random effects),
    analytic and sparse.

    With ``b`` the random effects, ``t`` the log SD of each one's component and ``w`` each
    row's count x mu (1 - mu) (the logit link is canonical: observed and expected
    information agree), it is ``[X Z]' W [X Z]`` plus the priors' curvature:
    ``1 / fe_p^2`` on each fixed effect, ``exp(-2 t)`` on each random effect,
    ``-2 b exp(-2 t)`` between a random effect and its log SD, and on each log SD
    ``2 sum(b^2) exp(-2 t) + 1 / vcp_p^2`` over its component's random effects."""
    k_fe, k_vcp = model.k_fep, model.k_vcp
    fe, log_sd, effects = params[:k_fe], params[k_fe : k_fe + k_vcp], params[k_fe + k_vcp :]
    mu = model.family.link.inverse(model.exog @ fe + model.exog_vc @ effects)
    design, transposed = _whole_design(model)
    weight = np.repeat(model.family.counts * mu * (1 - mu), np.diff(design.indptr))
    weighted = sparse.csr_matrix(
        (design.data * weight, design.indices, design.indptr), shape=design.shape
    )
    data = (transposed @ weighted).tocoo()
    fe_at, effect_at = np.arange(k_fe), k_fe + k_vcp + np.arange(len(effects))
    at = np.concatenate([fe_at, effect_at])  # the data's rows and columns in params order
    sd_at = k_fe + model.ident  # each random effect's log SD
    precision = np.exp(-2 * log_sd[model.ident])
    cross = -2 * effects * precision
    log_sd_curvature = (
        np.bincount(model.ident, weights=2 * effects**2 * precision, minlength=k_vcp)
        + 1 / model.vcp_p**2
    )
    rows = [at[data.row], fe_at, effect_at, sd_at, effect_at, k_fe + np.arange(k_vcp)]
    columns = [at[data.col], fe_at, effect_at, effect_at, sd_at, k_fe + np.arange(k_vcp)]
    values = [data.data, np.full(k_fe, 1 / model.fe_p**2), precision, cross, cross]
    values.append(log_sd_curvature)
    size = len(params)
    return sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(columns))),
        shape=(size, size),
    )


def _leading_sd(hessian: sparse.csr_matrix, k: int, diagonal: np.ndarray) -> np.ndarray:
    """Square roots of the first ``k`` diagonal entries of ``hessian``'s inverse, where the
    block of the indices ``diagonal`` (after the first ``k``) is diagonal: those indices are
    eliminated first (the Schur complement), so that the dense work is square in the other
    indices and linear in these."""
    keep = np.setdiff1d(np.arange(hessian.shape[0]), diagonal)
    block = hessian[diagonal][:, diagonal]
    if (block - sparse.diags(block.diagonal())).count_nonzero():
        raise ValueError("the eliminated block of the Hessian is not diagonal")
    across = hessian[keep][:, diagonal].toarray()
    schur = hessian[keep][:, keep].toarray() - (across / block.diagonal()) @ across.T
    leading = np.linalg.solve(schur, np.eye(len(keep))[:, :k])[:k]
    return np.sqrt(np.diag(leading))


def _mixed_model(rows: pd.DataFrame, reference: str):
    """statsmodels' ``BinomialBayesMixedGLM`` of ``correct ~ pattern`` with crossed scenario
    and condition random intercepts (in that order), on the count-weighted ``rows`` of
    :func:`_outcome_rows`, and the patterns in column order."""
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    exog, patterns = _pattern_design(rows, reference)
    exog_vc, component = _indicators(
        pd.Categorical(rows["scenario_id"]), pd.Categorical(rows["condition"])
    )
    model = BinomialBayesMixedGLM(
        rows["correct"].to_numpy(dtype="float64"), exog, exog_vc, component, vcp_p=1, fe_p=2
    )
    model.family = _CountWeightedBinomial(rows["count"].to_numpy(dtype="float64"))
    return model, patterns


def _laplace_fixed_effects(model) -> tuple[np.ndarray, np.ndarray]:
    """The fixed effects' posterior mode and Laplace SDs (the square roots of the diagonal
    of the inverse negative Hessian of the log posterior at the mode); ``ValueError`` when
    the optimiser stopped away from a mode."""
    mode = _posterior_mode(model)
    gradient = float(np.max(np.abs(mode.jac)))
    if not gradient <= GRADIENT_TOLERANCE:
        raise ValueError(
            f"the mixed model's fit did not converge: {mode.message} "
            f"(largest gradient component {gradient:.2g})"
        )
    # the random effects of the component with more levels are eliminated first: each row
    # has one level of each factor, so their block of the Hessian is diagonal
    largest = np.argmax(np.bincount(model.ident))
    eliminated = model.k_fep + model.k_vcp + np.flatnonzero(model.ident == largest)
    hessian = _negative_hessian(model, mode.x)
    return mode.x[: model.k_fep], _leading_sd(hessian, model.k_fep, eliminated)


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
    variance components, its default priors). The estimate is the posterior mode, found by
    :data:`OPTIMIZER` (a trust-region Newton method) from ``fit_map``'s seeded start; the
    interval is the mode +/- 1.96 posterior SD on the log-odds scale, the SD from the Laplace
    approximation (the inverse of the negative Hessian of the log posterior at the mode), a
    Bayesian interval under those priors, not a confidence interval. The Hessian is
    analytic and sparse (``fit_map`` differences the gradient once per parameter, random
    effects included), and the random effects of the factor with more levels are eliminated
    first (their block is diagonal), so the fit grows linearly with the conditions. The
    trials of a cell share every covariate, so the model is fitted on one row per cell and
    outcome, weighted by its number of trials: the same likelihood on a third of the rows or
    fewer. Condition as a random effect keeps the design narrow, where one fixed indicator
    each made the fit quadratic in the conditions.

    ``method="gee"``: GEE of ``correct ~ pattern + condition`` (one indicator per
    condition) with an exchangeable working correlation within scenarios (robust Wald
    interval), a population-averaged odds ratio.

    Parameters
    ----------
    cells : DataFrame
        Scored cells of one source (:func:`analysis.scoring.rules.score_cells`): ``source,
        scenario_id, condition, n_correct, n_trials, modal_scored``.
    scenarios : DataFrame
        ``scenario_id, boundary_pattern`` of every scenario in ``cells``.
    reference : str
        The pattern the others are compared with (default :data:`REFERENCE_PATTERN`).
    method : {"bayes", "gee"}
        The mixed model's posterior mode (default) or GEE.

    Returns
    -------
    DataFrame
        One row per pattern but ``reference``, by increasing odds ratio: ``pattern,
        estimate`` (odds ratio), ``ci_low, ci_high`` (95%: :data:`BAYES_METHOD` or
        :data:`GEE_METHOD`), ``n_clusters`` (its scenarios), ``method, level, reference,
        note`` (the Bayesian interval's reading; a pattern on fewer than ``MIN_CLUSTERS``
        scenarios: the note says so, and GEE gives no interval).

    Raises
    ------
    ValueError
        Cells of several sources; a ``reference`` with no scored trial; no cell with both
        correct and wrong trials (deterministic verdicts such as the reference policies);
        a mixed model whose optimiser stopped where the largest gradient component exceeds
        :data:`GRADIENT_TOLERANCE`; an unknown ``method``.

    See Also
    --------
    analysis.inference.trial_rows : the per-trial rows both fits start from.
    analysis.inference.gee_accuracy : GEE of each condition's accuracy.

    Examples
    --------
    Three simulated models at two settings on 60 scenarios:

    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=3, n_scenarios=60, seed=1)
    >>> out = pattern_difficulty(cells, scenarios)
    >>> out[["pattern", "estimate", "ci_low", "ci_high", "n_clusters"]].round(2)
                   pattern  estimate  ci_low  ci_high  n_clusters
    0      incident_mirror      0.36    0.17     0.76           7
    1    detector_conflict      0.49    0.28     0.87          21
    2  adversarial_control      0.72    0.26     2.00           3
    3   public_harm_anchor      2.63    1.37     5.06          13
    4        clean_control      4.00    1.03    15.52           2
    >>> gee = pattern_difficulty(cells, scenarios, method="gee")
    >>> gee.loc[gee["pattern"] == "clean_control", ["ci_low", "note"]].to_dict("records")
    [{'ci_low': nan, 'note': '2 scenario(s), fewer than 10: no robust interval'}]
    """
    # statsmodels' models load its formula machinery (about 0.15 s): imported when a fit
    # runs, not by every notebook that imports analysis.inference.
    from statsmodels.genmod.cov_struct import Exchangeable
    from statsmodels.genmod.generalized_estimating_equations import GEE

    if cells["source"].astype(str).nunique() > 1:
        raise ValueError("pattern_difficulty: give one source's cells at a time")
    if method == "gee":
        data = _design(cells, scenarios, reference)
    else:  # one row per cell and outcome (a bad method is refused below)
        data = _outcome_rows(cells, scenarios, reference)
    if not _mixed_cells(cells):
        raise ValueError(
            "every cell's trials agree (deterministic verdicts): a model of trial "
            "correctness has nothing to fit within cells"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "bayes":
            model, patterns = _mixed_model(data, reference)
            mean, sd = _laplace_fixed_effects(model)
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
