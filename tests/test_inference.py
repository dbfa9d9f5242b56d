"""analysis.inference: hand-worked cases, independent routes and the failure modes."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from factories import A, B, N, scenarios_frame, trials_frame
from scipy import sparse, stats
from statsmodels.stats.power import TTestPower

from analysis import inference as inf
from analysis.inference._arrays import effective_size_interval
from analysis.inference.clustered import exchangeable_gee
from analysis.scoring.rules import condition_scores, score_cells

FLOOR = ("m", "off")
HIGH = ("m", "high")


def _cells(spec: dict, statuses: dict | None = None, expected: dict | None = None):
    scenario_ids = sorted({scenario for scenario, _ in spec})
    expected = expected or {}
    scenarios = scenarios_frame({s: (expected.get(s, "block"), "none") for s in scenario_ids})
    scenarios["boundary_pattern"] = "calibration_control"
    return score_cells(trials_frame(spec, statuses or {}), scenarios), scenarios


# --------------------------------------------------------------------------------------------
# Paired reasoning contrasts
# --------------------------------------------------------------------------------------------


def mcnemar_spec() -> dict:
    """12 hold scenarios: both right 3, only high right 1, only floor right 6, neither 2;
    plus one scenario where the floor cell gives no decision at all."""
    right, wrong = [B] * 5, [A] * 5
    outcomes = [(1, 1)] * 3 + [(1, 0)] * 1 + [(0, 1)] * 6 + [(0, 0)] * 2
    spec = {}
    for i, (high, floor) in enumerate(outcomes):
        spec[(f"s{i:02d}", HIGH)] = right if high else wrong
        spec[(f"s{i:02d}", FLOOR)] = right if floor else wrong
    spec[("s99", HIGH)] = right
    spec[("s99", FLOOR)] = [N] * 5
    return spec


def test_mcnemar_score_p_worked_by_hand():
    cells, _ = _cells(mcnemar_spec())
    row = inf.paired_binary_difference(cells, "modal_accuracy").iloc[0]
    # discordant pairs 1 and 6: z = (1 - 6) / sqrt(7), two-sided normal p
    assert row.p == pytest.approx(2 * stats.norm.sf(5 / np.sqrt(7)))
    assert (row.both, row.only_high, row.only_floor, row.neither) == (3, 1, 6, 2)
    assert row.estimate == pytest.approx((1 - 6) / 12)
    assert row.n_clusters == 12 and row.n_unpaired == 1
    assert row.pairing.startswith("partly paired")
    assert row.ci_low < row.estimate < row.ci_high


def test_newcombe_paired_matches_the_published_worked_example():
    # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables, ch. 8:
    # table [[59, 6], [16, 80]] -> estimate -0.0621, 95% CI -0.1186 to -0.0046.
    low, high = inf.newcombe_paired_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    assert np.isnan(inf.newcombe_paired_interval(0, 0, 0, 0)).all()


def test_a_condition_with_no_decisions_does_not_crash():
    spec = {(f"s{i}", c): [N] * 5 for i in range(3) for c in (FLOOR, HIGH)}
    cells, scenarios = _cells(spec)
    for metric in ("modal_accuracy", "over_refusal"):
        row = inf.paired_binary_difference(cells, metric).iloc[0]
        assert row.n_clusters == 0 and np.isnan(row.estimate)
        assert row.pairing.startswith("unpaired")
    assert inf.paired_accuracy_difference(cells).iloc[0].estimate == 0
    assert (inf.clustered_accuracy(cells).estimate == 0).all()
    assert (inf.gee_accuracy(cells).note != "").all()
    assert (inf.pass_hat_k(cells).estimate == 0).all()
    assert len(inf.rank_uncertainty(cells)) == 2
    asymmetry = inf.pooled_direction_asymmetry(cells, scenarios)
    assert asymmetry.estimate.isna().all()


def test_unpaired_reasoning_on_the_published_counts(conditions):
    table = inf.unpaired_reasoning(conditions)
    n_models = conditions.groupby("model", observed=True).reasoning_level.nunique().eq(2).sum()
    assert len(table) == 2 * n_models
    assert table.method.str.contains("ignores pairing").all()
    accuracy = table.loc[table.metric == "mean_trial_accuracy"]
    # from counts alone each scenario counts once: the largest design effect
    assert accuracy.method.str.contains("each scenario counted once").all()
    high = conditions.set_index(["model", "reasoning_level"])["n_cells"]
    for row in accuracy.itertuples():
        assert row.n_effective_high == high[(row.model, "high")]
    excluding = (table.ci_low > 0) | (table.ci_high < 0)
    # each interval inverts the test beside it: p < .05 exactly where it excludes zero
    assert table.p.notna().all() and (excluding == (table.p < 0.05)).all()
    assert table.method.str.startswith("Miettinen-Nurminen score interval").all()


def test_unpaired_reasoning_from_verdicts_uses_the_clustered_effective_size():
    from analysis.inference._arrays import effective_size_interval
    from analysis.inference.simulate import simulated_cells
    from analysis.scoring.leaderboard import reasoning_level

    cells, _ = simulated_cells(n_models=1, n_scenarios=40, seed=3)
    counts = condition_scores(cells)
    counts["reasoning_level"] = counts["reasoning"].astype(str).map(reasoning_level)
    table = inf.unpaired_reasoning(counts, cells).set_index("metric")
    row = table.loc["mean_trial_accuracy"]
    high = cells.loc[cells["reasoning"].astype(str) == "high"]
    per = high.groupby(high["scenario_id"].astype(str), observed=True)[["n_correct", "n_trials"]]
    _, _, size = effective_size_interval(*per.sum().to_numpy().T)
    assert row.n_effective_high == pytest.approx(size)
    assert "estimated from per-trial verdicts" in row.method
    assert (row.p < 0.05) == (row.ci_low > 0 or row.ci_high < 0)
    # fewer than MIN_CLUSTERS scenarios: no test, and a note
    few = counts.assign(n_cells=5)
    assert (
        "fewer than 10"
        in inf.unpaired_reasoning(few).set_index("metric").loc["mean_trial_accuracy", "note"]
    )


def test_unpaired_reasoning_warns_nothing_when_a_rate_is_zero_or_one():
    rows = {"model": ["m", "m"], "reasoning": ["off", "high"], "reasoning_level": ["floor", "high"]}
    counts = {
        "n_trials_correct": [100, 60],  # every floor trial right: a rate of 1
        "n_trials": [100, 100],
        "n_over_refusals": [0, 6],  # no floor over-refusal: a rate of 0
        "n_proceed_opportunities": [40, 40],
        "n_modal_correct": [20, 12],
        "n_cells": [20, 20],
        "n_under_refusals": [0, 1],
        "n_hold_opportunities": [10, 10],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = inf.unpaired_reasoning(pd.DataFrame(rows | counts)).set_index("metric")
    assert table.loc["over_refusal", "estimate"] == pytest.approx(0.15)
    assert 0 < table.loc["over_refusal", "p"] < 0.05
    assert 0 < table.loc["mean_trial_accuracy", "p"] < 0.01  # 20 scenarios a side


# --------------------------------------------------------------------------------------------
# pass^k
# --------------------------------------------------------------------------------------------


def test_pass_k_on_cells_computed_by_hand():
    key = ("m", "off")
    spec = {
        ("s1", key): [A, A, A, A, A],  # 5 of 5
        ("s2", key): [A, B, A, N, A],  # 3 of 5, the null trial is wrong
        ("s3", key): [B, B, B, B, B],  # 0 of 5
        ("s4", key): [N, N, N, N, N],  # provider filtered: left out
    }
    statuses = {("s4", key): "provider_filtered"}
    expected = dict.fromkeys(("s1", "s2", "s3", "s4"), "proceed")
    cells, _ = _cells(spec, statuses, expected)
    got = inf.pass_hat_k(cells, n_boot=500).set_index("k").estimate
    # pass^k of a cell with c of n correct is C(c, k) / C(n, k): s2 gives 3/5, 3/10, 1/10, 0, 0.
    by_hand = {1: (1 + 3 / 5 + 0) / 3, 2: (1 + 3 / 10) / 3, 3: (1 + 1 / 10) / 3, 4: 1 / 3, 5: 1 / 3}
    for k, value in by_hand.items():
        assert got[k] == pytest.approx(value)


def test_pass_1_is_mean_trial_accuracy_and_pass_5_is_pass5():
    trials, scenarios, _ = inf.simulate_release(n_models=3, n_scenarios=40, seed=11)
    cells = score_cells(trials, scenarios)
    scores = condition_scores(cells).set_index("condition")
    passk = inf.pass_hat_k(cells, n_boot=200)
    for row in passk.itertuples():
        counts = scores.loc[row.condition]
        if row.k == 1:
            assert row.estimate == pytest.approx(counts.n_trials_correct / counts.n_trials)
        if row.k == 5:
            assert row.estimate == pytest.approx(counts.n_pass5 / counts.n_cells)


# --------------------------------------------------------------------------------------------
# Clustering
# --------------------------------------------------------------------------------------------


def test_anova_icc_against_pingouin_anova():
    correct = np.array([5, 4, 1, 0, 3, 2, 5, 0])
    n = np.full(8, 5)
    y = np.concatenate([[1] * c + [0] * (5 - c) for c in correct])
    group = np.repeat(np.arange(8), 5)
    table = pg.anova(data=pd.DataFrame({"y": y, "g": group}), dv="y", between="g", detailed=True)
    msb, msw = table["MS"].iloc[0], table["MS"].iloc[1]
    icc, deff = inf.anova_icc(correct, n)
    assert icc == pytest.approx((msb - msw) / (msb + 4 * msw))
    assert deff == pytest.approx(1 + 4 * icc)


def test_clustered_intervals_are_wider_than_wilson_on_clustered_data():
    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=106, seed=3)
    table = inf.clustered_accuracy(score_cells(trials, scenarios))
    assert ((table.ci_high - table.ci_low) > (table.wilson_high - table.wilson_low)).all()
    assert (table.design_effect > 1).all()
    assert table.estimand.str.contains("population of scenarios").all()


def test_pooled_quantities_on_the_reference_policies(scenarios):
    from analysis.scoring.breakdowns import mirror_gap, pattern_gradient
    from analysis.scoring.crosscheck import load_checked_cells

    _, cells = load_checked_cells(scenarios)
    reference = cells[cells.pool_of.astype(str) == "reference-policy"].assign(source="reference")
    gap = inf.pooled_mirror_gap(reference, scenarios).iloc[0]
    assert gap.estimate == pytest.approx(float(mirror_gap(reference, scenarios).gap))
    patterns = inf.pooled_pattern_accuracy(reference, scenarios)
    table3 = pattern_gradient(reference, scenarios).set_index("boundary_pattern")
    compared = 0
    for row in patterns.itertuples():
        name = row.quantity.removeprefix("modal accuracy: ")
        assert row.estimate == pytest.approx(table3.loc[name, "accuracy"])
        if table3.loc[name, "n_scenarios"] >= 10:  # Table 3 gives no interval on fewer
            compared += 1
            assert row.independent_low == pytest.approx(table3.loc[name, "accuracy_low"])
    assert compared >= 3


# --------------------------------------------------------------------------------------------
# Multiplicity, ranks, power, difficulty
# --------------------------------------------------------------------------------------------


def test_holm_and_bh_worked_by_hand():
    frame = pd.DataFrame({"p": [0.01, 0.04, 0.03, np.nan], "family": ["a", "a", "a", "a"]})
    out = inf.adjust_pvalues(frame, family="family")
    assert out.p_holm.iloc[:3].tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert out.p_bh.iloc[:3].tolist() == pytest.approx([0.03, 0.04, 0.04])
    assert out.survives_holm.tolist() == [True, False, False, False]
    assert out.survives_bh.tolist() == [True, True, True, False]
    assert out.family_size.iloc[0] == 3 and np.isnan(out.p_holm.iloc[3])


def test_rank_uncertainty_from_counts_is_labelled(conditions):
    ranks = inf.rank_uncertainty_from_counts(conditions)
    assert len(ranks) == len(conditions)
    assert ranks.p_first.sum() >= 1 - 1e-9
    assert (ranks.rank_low <= ranks["rank"]).all() and (ranks["rank"] <= ranks.rank_high).all()
    assert ranks.clustering.str.startswith("trials independent (no clustering").all()
    assert ranks.method.str.contains("pairwise differences").all()


def test_minimum_detectable_difference_by_its_formulas():
    from analysis.inference.detectable_mcnemar import mcnemar_power

    psi, n = 0.25, 106
    d = inf.minimum_detectable_difference(n, discordance=psi)
    assert mcnemar_power(d, n, psi) == pytest.approx(0.8)
    d_t = inf.minimum_detectable_difference(n, sd_diff=0.3)
    assert TTestPower().power(effect_size=d_t / 0.3, nobs=n, alpha=0.05) == pytest.approx(0.8)
    assert np.isnan(inf.minimum_detectable_difference(1, discordance=0.2))


def test_pattern_difficulty_recovers_the_hardest_pattern():
    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=106, seed=5)
    cells = score_cells(trials, scenarios)
    table = inf.pattern_difficulty(cells, scenarios, method="gee").set_index("pattern")
    assert (
        table.loc["incident_mirror", "estimate"] < 1 < table.loc["public_harm_anchor", "estimate"]
    )
    many = table.loc[table.n_clusters >= 10]
    assert (many.ci_low < many.estimate).all() and (many.estimate < many.ci_high).all()
    few = table.loc[table.n_clusters < 10]  # 4 and 6 scenarios: no robust interval, and why
    assert len(few) == 2 and few.ci_low.isna().all()
    assert few.note.str.contains("fewer than 10: no robust interval").all()
    assert (table.level == 0.95).all()
    with pytest.raises(ValueError, match="reference pattern"):
        inf.pattern_difficulty(cells, scenarios, reference="no_such_pattern")


def test_every_per_trial_method_runs_on_a_release_format_verdict_file(tmp_path):
    from analysis.exploring.export import write_scenarios_detail
    from analysis.trials import load_scenarios_detail

    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=30, seed=9)
    path = write_scenarios_detail(trials, scenarios, tmp_path / "scenarios-detail.json")
    published = load_scenarios_detail(path, scenarios=scenarios)
    cells = score_cells(published, scenarios)
    assert set(cells.source.astype(str)) == {"published"}
    direct = inf.clustered_accuracy(score_cells(trials, scenarios))
    via_file = inf.clustered_accuracy(cells)
    assert via_file.estimate.tolist() == pytest.approx(direct.estimate.tolist())
    paired = inf.paired_binary_difference(cells, "modal_accuracy")
    assert len(paired) == 2 and (paired.pairing == "paired").all()
    assert len(inf.pass_hat_k(cells, n_boot=200)) == 4 * 5
    assert len(inf.rank_uncertainty(cells, n_boot=200)) == 4
    assert len(inf.pooled_mirror_gap(cells, scenarios, n_boot=200)) == 1


@pytest.mark.parametrize("method", ["gee", "bayes"])
def test_pattern_difficulty_fits_the_model_the_formula_states(method):
    """The design built from arrays is the one statsmodels' formula interface builds."""
    import statsmodels.api as sm
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    from analysis.inference.difficulty import START_SEED

    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=60, seed=6)
    cells = score_cells(trials, scenarios)
    got = inf.pattern_difficulty(cells, scenarios, method=method).set_index("pattern")
    data = inf.trial_rows(cells)
    data["pattern"] = data.scenario_id.map(scenarios.set_index("scenario_id").boundary_pattern)
    formula = "correct ~ C(pattern, Treatment('calibration_control'))"
    if method == "gee":
        fit = sm.GEE.from_formula(
            formula + " + C(condition)",
            groups="scenario_id",
            data=data,
            family=sm.families.Binomial(),
            cov_struct=sm.cov_struct.Exchangeable(),
        ).fit()
        mean, names = fit.params.to_numpy(), fit.params.index
    else:
        # crossed random intercepts: scenario, then condition
        random = {"scenario": "0 + C(scenario_id)", "condition": "0 + C(condition)"}
        model = BinomialBayesMixedGLM.from_formula(formula, random, data)
        fit = model.fit_map(rng=START_SEED)
        mean, names = fit.fe_mean, model.exog_names
        sd = pd.Series(fit.fe_sd, index=names)
    for name, value in zip(names, mean, strict=True):
        if "[T." in name and "pattern" in name:
            pattern = name.split("[T.")[1].rstrip("]")
            assert got.loc[pattern, "estimate"] == pytest.approx(np.exp(value), rel=1e-6)
            if method == "bayes":  # fitted on count-weighted rows, one per cell and outcome
                high = np.exp(value + 1.96 * sd[name])
                assert got.loc[pattern, "ci_high"] == pytest.approx(high, rel=1e-5)
    assert len(got) == len(set(data.pattern)) - 1


def test_pattern_difficulty_refuses_deterministic_verdicts():
    trials, scenarios, _ = inf.simulate_release(n_models=1, n_scenarios=30, seed=2)
    cells = score_cells(trials, scenarios)
    cells["n_correct"] = np.where(cells["n_correct"] > 2, cells["n_trials"], 0)
    for method in ("bayes", "gee"):
        with pytest.raises(ValueError, match="every cell's trials agree"):
            inf.pattern_difficulty(cells, scenarios, method=method)


def test_gee_accuracy_is_statsmodels_gee():
    """The count-based fit against statsmodels' GEE on the trials, cluster sizes unequal."""
    import warnings

    import statsmodels.api as sm

    cells, _ = inf.simulate.simulated_cells(n_models=2, n_scenarios=50, seed=8)
    short = cells.index[::7]  # some cells lose trials (a correct one where there is one)
    cells.loc[short, "n_correct"] = (cells.loc[short, "n_correct"] - 1).clip(lower=0)
    cells.loc[short, "n_trials"] = cells.loc[short, "n_trials"] - 2
    cells["n_correct"] = cells[["n_correct", "n_trials"]].min(axis=1)
    got = inf.gee_accuracy(cells).set_index("condition")
    for condition, part in inf.trial_rows(cells).groupby("condition"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = sm.GEE(
                part["correct"].to_numpy(dtype=float),
                np.ones((len(part), 1)),
                groups=pd.Categorical(part["scenario_id"]).codes,
                family=sm.families.Binomial(),
                cov_struct=sm.cov_struct.Exchangeable(),
            )
            fit = model.fit()
        beta, se = float(fit.params[0]), float(fit.bse[0])
        row = got.loc[condition]
        assert row.estimate == pytest.approx(1 / (1 + np.exp(-beta)), abs=1e-6)
        # the count-based fit's robust standard error is statsmodels' too
        counts = part.groupby("scenario_id")["correct"].agg(["sum", "size"])
        fitted = exchangeable_gee(counts["sum"].to_numpy()[None], counts["size"].to_numpy()[None])
        assert fitted[1][0] == pytest.approx(se, rel=1e-4)
        # the interval: Clopper-Pearson at the effective size of the GEE-weighted counts
        weight = 1 / (1 + (counts["size"].to_numpy() - 1) * row.icc)
        low, high, _ = effective_size_interval(
            weight * counts["sum"].to_numpy(), weight * counts["size"].to_numpy(), len(part)
        )
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high))
        assert row.icc == pytest.approx(float(model.cov_struct.dep_params), abs=1e-5)


def test_pattern_difficulty_is_the_same_from_run_to_run():
    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=40, seed=3)
    cells = score_cells(trials, scenarios)
    first = inf.pattern_difficulty(cells, scenarios, method="bayes")
    pd.testing.assert_frame_equal(first, inf.pattern_difficulty(cells, scenarios, method="bayes"))


def test_count_weighted_family_is_the_binomial_likelihood_of_its_trials():
    from statsmodels.genmod.families import Binomial

    from analysis.inference.difficulty import _CountWeightedBinomial

    outcome = np.array([1.0, 0.0, 1.0, 0.0])
    counts = np.array([3.0, 2.0, 1.0, 4.0])
    mu = np.array([0.9, 0.3, 0.5, 0.05])
    trials = np.repeat(outcome, counts.astype(int)), np.repeat(mu, counts.astype(int))
    family = _CountWeightedBinomial(counts)
    assert family.loglike(outcome, mu) == pytest.approx(Binomial().loglike(*trials), rel=1e-12)
    per_trial_score = (trials[0] - trials[1]) / (
        Binomial().link.deriv(trials[1]) * Binomial().variance(trials[1])
    )
    row_score = (outcome - mu) / (family.link.deriv(mu) * family.variance(mu))
    sums = np.bincount(np.repeat(np.arange(4), counts.astype(int)), weights=per_trial_score)
    assert row_score == pytest.approx(sums, rel=1e-12)


def test_pattern_difficulty_reaches_the_mode_of_a_two_model_release():
    """Newton-CG stopped short of this mode (largest gradient component 2e5) and the table
    was refused; the optimiser reaches it."""
    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=106, seed=0)
    table = inf.pattern_difficulty(score_cells(trials, scenarios), scenarios, method="bayes")
    assert len(table) == scenarios["boundary_pattern"].nunique() - 1
    assert (table.ci_low < table.estimate).all() and (table.estimate < table.ci_high).all()


def test_mixed_model_hessian_is_the_log_posteriors_and_its_sds_the_inverses():
    """The analytic negative Hessian against central differences of statsmodels' gradient,
    and the SDs from the eliminated random effects against the dense inverse."""
    from statsmodels.tools.numdiff import approx_fprime

    from analysis.inference import difficulty

    cells, scenarios = inf.simulate.simulated_cells(n_models=3, n_scenarios=40, seed=1)
    rows = difficulty._outcome_rows(cells, scenarios, difficulty.REFERENCE_PATTERN)
    model, _ = difficulty._mixed_model(rows, difficulty.REFERENCE_PATTERN)
    params = np.random.default_rng(4).normal(scale=0.5, size=model.k_fep + model.k_vcp + model.k_vc)
    hessian = difficulty._negative_hessian(model, params).toarray()
    numeric = approx_fprime(params, lambda p: -model.logposterior_grad(p), centered=True)
    assert hessian == pytest.approx(numeric, rel=1e-6, abs=1e-6)
    assert np.array_equal(hessian, hessian.T)
    for component in (0, 1):
        eliminated = model.k_fep + model.k_vcp + np.flatnonzero(model.ident == component)
        sd = difficulty._leading_sd(sparse.csr_matrix(hessian), model.k_fep, eliminated)
        dense = np.sqrt(np.diag(np.linalg.inv(hessian))[: model.k_fep])
        assert sd == pytest.approx(dense, rel=1e-10)


def test_pattern_difficulty_refuses_a_fit_stopped_short_of_the_mode(monkeypatch):
    from analysis.inference import difficulty

    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=40, seed=3)
    cells = score_cells(trials, scenarios)
    monkeypatch.setattr(difficulty, "MAX_ITERATIONS", 2)
    with pytest.raises(ValueError, match=r"did not converge.*largest gradient component"):
        inf.pattern_difficulty(cells, scenarios, method="bayes")


def test_scenario_weights_are_exact_counts_of_draws_with_replacement():
    from analysis.inference._arrays import scenario_weights

    weights = scenario_weights(7, n_boot=300, seed=3)
    assert weights.dtype == np.float64
    assert np.array_equal(weights, np.round(weights)) and (weights >= 0).all()
    assert (weights.sum(axis=1) == 7).all()
    strata = np.array([0, 0, 1, 1, 1, 2, 2])
    stratified = scenario_weights(7, n_boot=300, seed=3, strata=strata)
    for label, size in ((0, 2), (1, 3), (2, 2)):
        assert (stratified[:, strata == label].sum(axis=1) == size).all()


@pytest.mark.parametrize("with_nan", [False, True])
def test_percentile_interval_is_nanpercentile(with_nan):
    from analysis.inference._arrays import percentile_interval

    replicates = np.random.default_rng(1).normal(size=(500, 4))
    if with_nan:
        replicates[::7, 1] = np.nan
        replicates[:, 3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an all-NaN column is not worth a warning
        low, high = percentile_interval(replicates)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the all-NaN column
        expected = np.nanpercentile(replicates, [2.5, 97.5], axis=0)
    np.testing.assert_array_equal(low, expected[0])
    np.testing.assert_array_equal(high, expected[1])


def test_all_nan_replicates_give_bounds_shaped_as_numpys():
    """A 1-D input gives scalar bounds, as np.percentile does: a 0-d array in a table row
    made the column an object column, printed unrounded ("0.6666666666666666")."""
    from analysis.inference._arrays import percentile_interval

    low, high = percentile_interval(np.full(50, np.nan))
    assert np.ndim(low) == 0 and np.isnan(low) and isinstance(high, np.floating)
    low, high = percentile_interval(np.full((50, 3), np.nan))
    assert low.shape == high.shape == (3,)


def test_pooled_asymmetry_without_under_refusals_keeps_numeric_columns():
    from analysis.inference.simulate import simulated_cells

    cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=2)
    hold = cells["required_gate"].astype(str) == "blocked"
    cells.loc[hold, "modal_decision"] = "blocked"  # no under-refusal: the ratio is undefined
    cells.loc[hold, "modal_correct"] = True
    out = inf.pooled_direction_asymmetry(cells, scenarios, n_boot=200)
    ratio = out.set_index("quantity").loc["over / under rate ratio"]
    assert np.isnan(ratio.ci_low) and np.isnan(ratio.estimate)
    numeric = ["estimate", "ci_low", "ci_high", "independent_low", "independent_high"]
    assert all(pd.api.types.is_float_dtype(out[c]) for c in numeric)


def test_pooled_asymmetry_without_over_refusals_has_a_zero_ratio_and_no_log_interval():
    from analysis.inference.simulate import simulated_cells

    cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=2)
    proceed = cells["required_gate"].astype(str) == "allowed"
    cells.loc[proceed, "modal_decision"] = "allowed"  # no over-refusal: log(0) is undefined
    cells.loc[proceed, "modal_correct"] = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = inf.pooled_direction_asymmetry(cells, scenarios, n_boot=200)
    ratio = out.set_index("quantity").loc["over / under rate ratio"]
    assert ratio.estimate == 0.0
    assert np.isnan(ratio.independent_low) and np.isnan(ratio.independent_high)


def test_a_source_whose_every_cell_was_filtered_gives_empty_estimates():
    from analysis.inference.clustered import CLUSTERED_COLUMNS
    from analysis.inference.passk import PASS_K_COLUMNS
    from analysis.inference.simulate import simulated_cells

    cells, _ = simulated_cells(n_models=1, n_scenarios=20, seed=1)
    filtered = cells.assign(provider_filtered=True, modal_scored=False, directionally_scored=False)
    passk = inf.pass_hat_k(filtered, n_boot=100)
    assert passk.empty and list(passk.columns) == PASS_K_COLUMNS
    clustered = inf.clustered_accuracy(filtered, n_boot=100)
    assert clustered.empty and list(clustered.columns) == CLUSTERED_COLUMNS
    both = pd.concat([filtered.assign(source="run"), cells.assign(source="published")])
    assert set(inf.pass_hat_k(both, n_boot=100)["source"]) == {"published"}


def test_clopper_pearson_is_statsmodels_beta_interval():
    """The bounds from scipy.special are statsmodels' ``proportion_confint(method="beta")``,
    bit for bit, at integer and non-integer counts, 0 and the size included."""
    from statsmodels.stats.proportion import proportion_confint

    from analysis.inference._arrays import clopper_pearson

    rng = np.random.default_rng(5)
    sizes = rng.uniform(1, 3000, 400)
    counts = np.r_[np.zeros(5), sizes[5:10], np.floor(rng.uniform(0, sizes[10:]))]
    for count, size in zip(counts, sizes, strict=True):
        for alpha in (0.05, 0.01):
            expected = proportion_confint(count, size, alpha=alpha, method="beta")
            assert clopper_pearson(count, size, alpha) == tuple(map(float, expected))
