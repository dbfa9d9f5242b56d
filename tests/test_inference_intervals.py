"""Intervals that never mislead: no truncated, zero-width or single-cluster interval, and
paired tests built on their interval's statistic. Each method is held to an independent
computation (another library, an enumeration or a direct search)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from factories import A, B, scenarios_frame, trials_frame
from scipy import optimize, stats

from analysis import inference as inf
from analysis.inference._arrays import MIN_CLUSTERS, guarded_interval, ratio_interval
from analysis.inference.paired import mcnemar_score_p, tango_interval
from analysis.scoring.rules import score_cells

FLOOR, HIGH = ("m", "off"), ("m", "high")


def _cells(spec: dict, expected: dict | None = None):
    ids = sorted({scenario for scenario, _ in spec})
    expected = expected or {}
    scenarios = scenarios_frame({s: (expected.get(s, "block"), "none") for s in ids})
    scenarios["boundary_pattern"] = "calibration_control"
    return score_cells(trials_frame(spec, {}), scenarios), scenarios


# --------------------------------------------------------------------------------------------
# Degenerate and truncated intervals
# --------------------------------------------------------------------------------------------


def test_a_rate_of_zero_counts_each_scenario_once_never_zero_width():
    cells, _ = _cells({(f"s{i:02d}", FLOOR): [A] * 5 for i in range(33)})  # all wrong
    row = inf.clustered_accuracy(cells).iloc[0]
    assert row.estimate == 0 and row.ci_high > row.ci_low == 0
    # Clopper-Pearson at 33 scenarios shrunk by (z / t_32)^2; at 0 successes its upper
    # bound is the 97.5th percentile of Beta(1, size), here from scipy
    size = 33 * (stats.norm.isf(0.025) / stats.t.isf(0.025, 32)) ** 2
    assert row.ci_high == pytest.approx(stats.beta.ppf(0.975, 1, size))
    assert row.method == inf._arrays.EFFECTIVE_SIZE_CP and "counted once" in row.note
    for table in (inf.pass_hat_k(cells), inf.gee_accuracy(cells)):
        assert (table.ci_high > table.ci_low).all()
    assert "no GEE fit" in inf.gee_accuracy(cells).note.iloc[0]


def test_fewer_scenarios_than_the_minimum_give_no_interval_and_say_why():
    n = MIN_CLUSTERS - 1
    cells, scenarios = _cells(
        {(f"s{i}", c): [B, B, A, B, B] for i in range(n) for c in (FLOOR, HIGH)}
    )
    for table in (
        inf.clustered_accuracy(cells, n_boot=200),
        inf.pass_hat_k(cells, n_boot=200),
        inf.pooled_pattern_accuracy(cells, scenarios, n_boot=200),
        inf.paired_accuracy_difference(cells),
        inf.paired_binary_difference(cells),
    ):
        assert table.ci_low.isna().all() and table.ci_high.isna().all()
        assert table.note.str.contains(f"{n} ").all()
    gee = inf.gee_accuracy(cells)
    assert gee.ci_low.isna().all() and gee.note.str.contains("fewer than").all()
    ranks = inf.rank_uncertainty(cells, n_boot=200)
    assert ranks.rank_low.isna().all() and ranks.p_first.isna().all()
    assert ranks.note.str.startswith(f"no rank sets: {n} scenario(s)").all()


def test_guarded_interval_keeps_a_spread_and_refuses_a_spreadless_difference():
    assert guarded_interval(0.1, 0.3, 0.2, 40, "m")["ci_low"] == 0.1
    diff = guarded_interval(0.0, 0.0, 0.0, 40, "m", proportion=False)
    assert np.isnan(diff["ci_low"]) and "same value" in diff["note"]


def test_the_ratio_keeps_resamples_with_no_under_refusal_as_unbounded():
    rng = np.random.default_rng(5)
    over = rng.uniform(0.2, 0.5, 1000)
    under = np.where(rng.random(1000) < 0.36, 0.0, rng.uniform(0.01, 0.05, 1000))
    low, high = ratio_interval(over, under)
    assert np.isinf(high)
    # the 2.5th order statistic of every resample, the infinite ones included, by sorting
    values = sorted(o / u if u else float("inf") for o, u in zip(over, under, strict=True))
    assert low == values[int(np.floor(0.025 * 999))]
    # with few zero denominators the upper end is the finite order statistic
    under[:] = rng.uniform(0.01, 0.05, 1000)
    under[:10] = 0.0
    low, high = ratio_interval(over, under)
    values = sorted(o / u if u else float("inf") for o, u in zip(over, under, strict=True))
    assert np.isfinite(high) and high == values[int(np.ceil(0.975 * 999))]


def test_the_pooled_ratio_of_one_under_refusal_in_fifty_is_unbounded():
    # 50 hold scenarios, one under-refusal; 56 proceed scenarios, 19 over-refusals
    spec, expected = {}, {}
    for i in range(50):
        spec[(f"h{i:02d}", FLOOR)] = [A] * 5 if i == 0 else [B] * 5
        expected[f"h{i:02d}"] = "block"
    for i in range(56):
        spec[(f"p{i:02d}", FLOOR)] = [B] * 5 if i < 19 else [A] * 5
        expected[f"p{i:02d}"] = "proceed"
    cells, scenarios = _cells(spec, expected)
    out = inf.pooled_direction_asymmetry(cells, scenarios).set_index("quantity")
    ratio = out.loc["over / under rate ratio"]
    assert ratio.estimate == pytest.approx((19 / 56) / (1 / 50))
    assert np.isinf(ratio.ci_high) and "unbounded" in ratio.note
    assert 0 < ratio.ci_low < ratio.estimate


def test_pass_k_refuses_k_above_a_cells_trials():
    cells, _ = _cells({(f"s{i:02d}", FLOOR): [B, B, B, A, B] for i in range(12)})
    short = cells["scenario_id"].astype(str) == "s00"  # one cell of three trials (a merged run)
    cells.loc[short, ["n_trials", "n_correct"]] = 3
    out = inf.pass_hat_k(cells, n_boot=200).set_index("k")
    assert out.loc[3, "estimate"] > 0 and out.loc[3, "n_short"] == 0
    for k in (4, 5):
        assert np.isnan(out.loc[k, "estimate"]) and np.isnan(out.loc[k, "ci_low"])
        assert out.loc[k, "note"] == f"refused: 1 scored cell(s) with fewer than {k} trials"


# --------------------------------------------------------------------------------------------
# Paired tests and their intervals
# --------------------------------------------------------------------------------------------


def _restricted_score(delta: float, b: int, c: int, n: int) -> float:
    """Tango's statistic with the restricted MLE found by a numerical search, not the
    closed-form root."""
    lo, hi = max(0.0, -delta), (1 - delta) / 2

    def minus_loglik(q: float) -> float:
        p12, p21, rest = q + delta, q, 1 - 2 * q - delta
        terms = [(b, p12), (c, p21), (n - b - c, rest)]
        return -sum(k * np.log(max(p, 1e-300)) for k, p in terms if k)

    q = optimize.minimize_scalar(
        minus_loglik, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}
    ).x
    return (b - c - n * delta) / np.sqrt(n * (2 * q + delta * (1 - delta)))


@pytest.mark.parametrize("table", [(59, 6, 16, 80), (3, 1, 6, 2), (10, 0, 4, 6), (5, 2, 2, 1)])
def test_tango_interval_against_a_numerical_inversion(table):
    a, b, c, d = table
    n = a + b + c + d
    low, high = tango_interval(*table)
    z = stats.norm.ppf(0.975)
    assert _restricted_score(low, b, c, n) == pytest.approx(z, abs=1e-4)
    assert _restricted_score(high, b, c, n) == pytest.approx(-z, abs=1e-4)


def test_tango_interval_and_the_mcnemar_score_test_always_agree():
    disagreements = 0
    for n in range(1, 15):
        for b, c in itertools.product(range(n + 1), repeat=2):
            if b + c > n:
                continue
            low, high = tango_interval(n - b - c, b, c, 0)
            p = mcnemar_score_p(b, c)
            # chi-square p, computed here from scipy, not statsmodels
            expected = 1.0 if b + c == 0 else stats.chi2.sf((b - c) ** 2 / (b + c), 1)
            assert p == pytest.approx(expected)
            excludes = low > 0 or high < 0
            if abs(p - 0.05) > 1e-9:
                disagreements += excludes != (p < 0.05)
            assert high > low
    assert disagreements == 0


def test_paired_mean_accuracy_is_the_paired_t_of_pingouin_at_its_effective_df():
    rng = np.random.default_rng(7)
    spec = {}
    for i in range(20):
        for condition in (FLOOR, HIGH):
            spec[(f"s{i:02d}", condition)] = [B if rng.random() < 0.6 else A for _ in range(5)]
    cells, _ = _cells(spec)
    row = inf.paired_accuracy_difference(cells).iloc[0]
    high = [sum(p == B for p in spec[(f"s{i:02d}", HIGH)]) / 5 for i in range(20)]
    floor = [sum(p == B for p in spec[(f"s{i:02d}", FLOOR)]) / 5 for i in range(20)]
    expected = pg.ttest(high, floor, paired=True)
    diff = np.subtract(high, floor)
    assert row.estimate == pytest.approx(diff.mean())
    # pingouin's statistic, referred to t at the effective (Satterthwaite) df
    kurtosis = stats.kurtosis(diff, fisher=False, bias=True)
    df = 2 / (2 / 19 + max(kurtosis - 3, 0) / 20)
    assert row.df == pytest.approx(df) and df <= 19
    t = float(expected["T"].iloc[0])
    assert row.p == pytest.approx(2 * stats.t.sf(abs(t), df))
    half = stats.t.isf(0.025, df) * abs(diff.mean() / t)
    assert [row.ci_low, row.ci_high] == pytest.approx([diff.mean() - half, diff.mean() + half])
    assert (row.p < 0.05) == (row.ci_low > 0 or row.ci_high < 0)
    assert "t-test" in row.test and "t interval" in row.method


def test_a_paired_contrast_with_no_discordant_pair_keeps_a_width_and_says_so():
    spec = {(f"s{i:02d}", c): [B] * 5 for i in range(12) for c in (FLOOR, HIGH)}
    cells, _ = _cells(spec)
    row = inf.paired_binary_difference(cells).iloc[0]
    assert row.p == 1.0 and row.ci_low < 0 < row.ci_high
    assert "no discordant pair" in row.note
    same = inf.paired_accuracy_difference(cells).iloc[0]
    assert np.isnan(same.ci_low) and "same" in same.note


def test_no_table_of_a_simulated_release_holds_a_zero_width_interval():
    trials, scenarios, _ = inf.simulate_release(n_models=2, n_scenarios=40, seed=8)
    cells = score_cells(trials, scenarios)
    tables = [
        inf.clustered_accuracy(cells, n_boot=300),
        inf.pass_hat_k(cells, n_boot=300),
        inf.pooled_pattern_accuracy(cells, scenarios, n_boot=300),
        inf.pooled_mirror_gap(cells, scenarios, n_boot=300),
        inf.pooled_direction_asymmetry(cells, scenarios, n_boot=300),
        inf.paired_binary_difference(cells),
        inf.paired_accuracy_difference(cells),
    ]
    for table in tables:
        both = table.dropna(subset=["ci_low", "ci_high"])
        assert (both.ci_high > both.ci_low).all()
        assert pd.api.types.is_float_dtype(table.ci_low)


# --------------------------------------------------------------------------------------------
# Ranks
# --------------------------------------------------------------------------------------------


def test_rank_sets_count_the_pairs_whose_step_down_max_t_intervals_separate():
    """Rebuilt with loops over pairs and replicates: each step's joint critical value is the
    95th percentile of the largest |t| over the pairs not yet separated, and a rank set
    counts the conditions separated above and below."""
    from analysis.inference.ranks import simultaneous_rank_sets

    rng = np.random.default_rng(2)
    estimate = np.linspace(0.5, 0.9, 8)
    replicates = estimate + rng.normal(0, 0.03, size=(400, 8))
    sets = simultaneous_rank_sets(estimate, replicates)
    pairs = [(i, j) for i in range(8) for j in range(8) if i != j]
    deviation = replicates - estimate
    se = {(i, j): np.std(deviation[:, i] - deviation[:, j], ddof=1) for i, j in pairs}
    z = {(i, j): (estimate[i] - estimate[j]) / se[i, j] for i, j in pairs}
    active, criticals = set(pairs), []
    while True:
        worst = [max(abs(r[i] - r[j]) / se[i, j] for i, j in active) for r in deviation.tolist()]
        criticals.append(np.quantile(worst, 0.95, method="higher"))
        newly = {p for p in active if abs(z[p]) > criticals[-1]}
        if not newly:
            break
        active -= newly
    assert len(criticals) > 1  # the step-down separated more than the single step
    assert sets["t_critical_joint"] == pytest.approx(criticals[0])
    above = {p: p not in active and z[p] > 0 for p in pairs}
    for i in range(8):
        assert sets["low_joint"][i] == 1 + sum(above[j, i] for j in range(8) if j != i)
        assert sets["high_joint"][i] == 8 - sum(above[i, j] for j in range(8) if j != i)
    assert (sets["low_joint"] <= sets["low"]).all() and (sets["high"] <= sets["high_joint"]).all()
    assert ((sets["high_joint"] - sets["low_joint"]) > 0).any()
    with pytest.raises(ValueError, match="replicates must be"):
        simultaneous_rank_sets(estimate, replicates[:, :3])


def test_p_first_shares_ties_sums_to_one_and_reads_below_one_in_b():
    spec = {}
    for i in range(12):
        for model in ("a", "b", "c"):
            spec[(f"s{i:02d}", (model, "off"))] = [B] * 5 if model != "c" else [A] * 5
    cells, _ = _cells(spec)
    ranks = inf.rank_uncertainty(cells, n_boot=200).set_index("condition")
    assert ranks.p_first.sum() == pytest.approx(1.0)
    assert ranks.loc["a (off)", "p_first"] == pytest.approx(0.5)
    # never ranked first in 200 resamples: no probability of 0, a bound
    assert np.isnan(ranks.loc["c (off)", "p_first"])
    assert ranks.loc["c (off)", "p_first_shown"] == "< 1/200"
    assert ranks.loc["a (off)", "p_first_shown"] == "0.500"


# --------------------------------------------------------------------------------------------
# Multiplicity families
# --------------------------------------------------------------------------------------------


def test_named_families_carry_their_caveat_and_match_statsmodels():
    from statsmodels.stats.multitest import multipletests

    frame = pd.DataFrame(
        {"p": [0.001, 0.02, 0.04, 0.3, 0.01, 0.5], "metric": ["a"] * 4 + ["b"] * 2}
    )
    out = inf.adjust_pvalues(frame, family="metric", named="reasoning-published")
    for metric, part in out.groupby("metric"):
        holm = multipletests(part.p, method="holm")[1]
        bh = multipletests(part.p, method="fdr_bh")[1]
        assert part.p_holm.tolist() == pytest.approx(list(holm))
        assert part.p_bh.tolist() == pytest.approx(list(bh))
        assert (part.family_name == f"reasoning contrasts, published counts: {metric}").all()
    assert out.caveat.str.contains("ignore the pairing").all()
    with pytest.raises(ValueError, match="unknown family"):
        inf.adjust_pvalues(frame, named="everything")


# --------------------------------------------------------------------------------------------
# The estimand, and resampling within strata
# --------------------------------------------------------------------------------------------


def test_resampling_within_strata_matches_the_stratified_variance_formula():
    from analysis.inference._arrays import accuracy_replicates, cell_arrays

    rng = np.random.default_rng(4)
    strata = np.repeat(["x", "y"], [30, 20])
    level = np.where(strata == "x", 0.9, 0.3)  # strata far apart: free resampling mixes them
    spec = {
        (f"s{i:02d}", FLOOR): [B if rng.random() < p else A for _ in range(5)]
        for i, p in enumerate(level)
    }
    cells, _ = _cells(spec)
    arrays = cell_arrays(cells)
    labels = pd.Series(strata, index=[f"s{i:02d}" for i in range(50)]).loc[arrays.scenarios]
    replicates = accuracy_replicates(arrays, 8000, 1, labels.to_numpy())[:, 0]
    # equal cells of 5 trials: the mean over scenarios of each scenario's share; resampling
    # n_h of n_h within each stratum has variance sum (n_h / n)^2 s_h^2 (n_h - 1) / n_h^2
    share = arrays.n_correct[0] / arrays.n_trials[0]
    expected = sum(
        (share[labels.to_numpy() == h].size / 50) ** 2
        * share[labels.to_numpy() == h].var(ddof=1)
        * (share[labels.to_numpy() == h].size - 1)
        / share[labels.to_numpy() == h].size ** 2
        for h in ("x", "y")
    )
    assert replicates.var() == pytest.approx(expected, rel=0.06)
    free = accuracy_replicates(arrays, 8000, 1)[:, 0]
    assert free.var() > 1.5 * replicates.var()
    out = inf.clustered_accuracy(cells, strata=labels)
    assert out.method.iloc[0].endswith("stratified variance")
    assert out.estimand.iloc[0] == inf.ESTIMAND
    # strata far apart: the stratified interval is the narrower, and both hold the estimate
    free = inf.clustered_accuracy(cells).iloc[0]
    row = out.iloc[0]
    assert row.ci_high - row.ci_low < 0.8 * (free.ci_high - free.ci_low)
    assert row.ci_low < row.estimate < row.ci_high


def test_the_correlation_a_holm_survivor_needs_puts_the_paired_test_on_its_threshold():
    from analysis.inference.pairing_bound import correlation_needed

    conditions = pd.DataFrame(
        {
            "model": ["m", "m", "n", "n"],
            "reasoning_level": ["floor", "high", "floor", "high"],
            "n_over_refusals": [10, 24, 12, 15],
            "n_proceed_opportunities": [50, 50, 50, 50],
        }
    )
    adjusted = pd.DataFrame(
        {
            "model": ["m", "n"],
            "metric": ["over_refusal"] * 2,
            "estimate": [14 / 50, 3 / 50],
            "p": [0.001, 0.5],
        }
    )
    rho = correlation_needed(adjusted, conditions, 5)
    # the paired z-test at that correlation, its variance from explicit binary outcomes
    floor = np.r_[np.ones(10), np.zeros(40)]
    high = np.r_[np.ones(24), np.zeros(26)]
    sd_f, sd_h = floor.std(ddof=1), high.std(ddof=1)
    variance = (sd_f**2 + sd_h**2 - 2 * rho[0] * sd_f * sd_h) / 50
    p = 2 * stats.norm.sf((14 / 50) / np.sqrt(variance))
    assert p == pytest.approx(0.05 / 2)  # first of two: Holm's step alpha / 2
    assert rho[0] < rho[1]  # the smaller difference needs more correlation


def test_rank_sets_of_the_leading_conditions_only_keep_their_marginal_sets():
    """With ``leading``, the leading conditions' marginal sets are the all-pairs ones (the
    same pairs), their simultaneous sets lie within the all-pairs ones (a smaller family),
    and every other condition has none."""
    rng = np.random.default_rng(3)
    estimate = np.linspace(0.9, 0.6, 12)
    replicates = estimate + 0.02 * rng.standard_normal((2000, 12))
    full = inf.simultaneous_rank_sets(estimate, replicates)
    part = inf.simultaneous_rank_sets(estimate, replicates, leading=4)
    assert part["low"][:4].tolist() == full["low"][:4].tolist()
    assert part["high"][:4].tolist() == full["high"][:4].tolist()
    assert (part["low_joint"][:4] >= full["low_joint"][:4]).all()
    assert (part["high_joint"][:4] <= full["high_joint"][:4]).all()
    assert np.isnan(part["low"][4:]).all() and np.isnan(part["high_joint"][4:]).all()


def test_a_large_leaderboard_gives_rank_sets_to_its_leading_conditions_and_says_so():
    conditions = pd.DataFrame(
        {
            "label": [f"c{i:03d}" for i in range(70)],
            "n_trials_correct": np.linspace(500, 300, 70).astype(int),
            "n_trials": 530,
        }
    )
    out = inf.rank_uncertainty_from_counts(conditions, n_boot=400, label="label")
    has_set = out["rank_low"].notna()
    assert has_set.sum() == 30 and out.loc[has_set, "rank"].max() == 30
    assert out.loc[~has_set, "note"].str.startswith("no rank set: outside the leading 30").all()
    every = inf.rank_uncertainty_from_counts(conditions, n_boot=400, label="label", leading=None)
    assert every["rank_low"].notna().all() and "note" not in every
