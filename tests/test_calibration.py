"""The calibration oracle: its truth is right, it tells a good interval from a bad one, a
few hard settings of the registered methods meet the standard, and the docs' table is the
one the benchmark wrote last.

The full grid is ``benchmarks/bench_calibration.py``; these checks measure a handful of
its settings with fixed seeds, so they give the same result on every run.
"""

from __future__ import annotations

import importlib.util
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis import paths
from analysis.inference.calibration import (
    POPULATION,
    SAMPLE,
    Design,
    Setting,
    cells_frame,
    draw,
    modal_probability,
)
from analysis.inference.coverage import Method, cluster_share, measure, verdict
from analysis.scoring.intervals import wilson_interval
from analysis.scoring.rules import condition_scores

BENCH = paths.PROJECT_ROOT / "benchmarks" / "bench_calibration.py"
REPS = 400
SEED = 20261204


def _bench():
    spec = importlib.util.spec_from_file_location("bench_calibration", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def _measure(method: Method, setting: Setting, reps: int = REPS) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return measure(method, setting, reps, SEED)


def _entry(name: str, kind: str, quantity: str = "mean_trial_accuracy") -> Method:
    (method,) = [
        m for m in bench.REGISTRY if m.name == name and m.kind == kind and m.quantity == quantity
    ]
    return method


# --- the model's truth ------------------------------------------------------------


@pytest.mark.parametrize("metric", ["mean_trial_accuracy", "modal_accuracy", "over_refusal"])
@pytest.mark.parametrize("icc", [0.0, 0.5])
def test_the_population_truth_is_the_mean_of_many_drawn_releases(metric, icc):
    setting = Setting(scenarios=40, icc=icc, rate=0.8, metric=metric, pattern_effect=0.5)
    d = draw(setting, reps=3000, seed=1)
    population = d.truth(metric, POPULATION)[0, 0]
    assert population == pytest.approx(0.8, abs=1e-9)
    sample = d.truth(metric, SAMPLE)[:, 0]  # each release's own scenarios
    assert sample.mean() == pytest.approx(population, abs=4 * sample.std() / np.sqrt(3000) + 1e-9)
    assert (sample.std() > 0.01) if icc else (sample.std() < 1e-9)  # no random effect


def test_the_drawn_counts_follow_the_cell_probabilities():
    d = draw(Setting(scenarios=50, trials=7, icc=0.3), reps=400, seed=2)
    assert d.correct.mean() == pytest.approx(7 * d.p.mean(), rel=0.01)
    expected = modal_probability(d.p, 7).mean()
    assert d.modal_correct.mean() == pytest.approx(expected, abs=0.01)


def test_modal_probability_is_the_binomial_majority_with_ties_halved():
    p = np.array([0.2, 0.5, 0.9])
    odd = sum(stats.binom.pmf(c, 5, p) for c in (3, 4, 5))
    even = sum(stats.binom.pmf(c, 4, p) for c in (3, 4)) + stats.binom.pmf(2, 4, p) / 2
    np.testing.assert_allclose(modal_probability(p, 5), odd)
    np.testing.assert_allclose(modal_probability(p, 4), even)


def test_paired_conditions_share_their_scenario_effects_as_set():
    setting = Setting(scenarios=106, icc=0.75, pair_corr=0.9, rate=0.5)
    d = draw(setting, reps=200, seed=3)
    logit = np.log(d.p / (1 - d.p)) - Design(setting).logits[None, :, None]
    r = np.corrcoef(logit[:, 0].ravel(), logit[:, 1].ravel())[0, 1]
    assert r == pytest.approx(0.9, abs=0.02)


def test_the_cells_table_scores_as_the_package_scores():
    d = draw(Setting(scenarios=12, conditions=2, rate=0.7), reps=3, seed=4)
    cells = cells_frame(d).drop(columns=["rep", "j"])
    counts = condition_scores(cells)
    assert counts["n_trials_correct"].sum() == d.correct.sum()
    assert counts["n_modal_correct"].sum() == d.modal_correct.sum()
    over = counts["n_over_refusals"].sum()
    assert over == (~d.modal_correct[..., d.design.proceed]).sum()


def test_a_setting_outside_the_model_is_refused():
    with pytest.raises(ValueError, match="icc"):
        Setting(icc=1.0)
    with pytest.raises(ValueError, match="true values"):
        Setting(rate=0.99, difference=0.05)
    with pytest.raises(ValueError, match="difference 0"):
        Method("t", "test", "x", POPULATION, lambda d: None, (Setting(difference=0.1),))


# --- the harness: a check that can fail -------------------------------------------


def test_the_monte_carlo_error_is_the_binomial_one_for_independent_results():
    hit = (np.random.default_rng(5).random(10_000) < 0.9).astype(float)
    share, se = cluster_share(hit, np.arange(10_000))
    assert se == pytest.approx(np.sqrt(share * (1 - share) / 10_000), rel=1e-3)
    shared, se_shared = cluster_share(hit, np.arange(10_000) // 10)  # ten to a release
    assert shared == share and se_shared != se


def test_the_verdict_reads_the_standard_within_monte_carlo_error():
    assert verdict("interval", 0.935, 0.005) == "pass"  # 94% within two SEs
    assert verdict("interval", 0.92, 0.005) == "fail"
    assert verdict("set", 0.95, 0.01, zero_width=0) == "pass"
    assert verdict("interval", 0.97, 0.01, zero_width=3) == "fail"
    assert verdict("test", 0.065, 0.005) == "pass"
    assert verdict("test", 0.08, 0.005) == "fail"
    assert verdict("interval", np.nan, np.nan) == "refused"
    # a power: within one point (POWER_TOLERANCE) plus two SEs of the nominal, either way
    assert verdict("power", 0.615, 0.005, nominal=0.6) == "pass"
    assert verdict("power", 0.585, 0.005, nominal=0.6) == "pass"
    assert verdict("power", 0.625, 0.005, nominal=0.6) == "fail"
    assert verdict("power", 0.575, 0.005, nominal=0.6) == "fail"


def test_exact_clopper_pearson_on_independent_trials_passes():
    (good, _) = bench.CONTROLS
    row = _measure(good, good.settings[0], reps=1000)
    assert row["share"] >= 0.95 - 2 * row["mc_se"] and row["verdict"] == "pass"


def test_a_too_narrow_interval_is_found_failing():
    (_, narrow) = bench.CONTROLS
    row = _measure(narrow, narrow.settings[0])
    assert row["share"] < 0.8 and row["verdict"] == "fail"


def _wilson_on_trials(d):
    k = d.correct.sum(-1).ravel()
    low, high = wilson_interval(k, d.design.setting.trials * d.design.setting.scenarios)
    truth = d.truth("mean_trial_accuracy", POPULATION).ravel()
    return pd.DataFrame({"rep": np.arange(d.reps), "low": low, "high": high, "truth": truth})


def test_an_interval_ignoring_clustering_fails_against_the_population():
    wilson = Method("Wilson", "interval", "mean_trial_accuracy", POPULATION, _wilson_on_trials, ())
    clustered = Setting(conditions=1, scenarios=106, icc=0.5, rate=0.7)
    independent = replace(clustered, icc=0.0)
    assert _measure(wilson, clustered)["verdict"] == "fail"
    assert _measure(wilson, independent)["verdict"] == "pass"


def _rejects_half(d):
    return pd.DataFrame({"rep": np.arange(d.reps), "p": np.tile([0.01, 0.5], d.reps)[: d.reps]})


def test_a_test_rejecting_too_often_is_found_failing():
    bad = Method("coin", "test", "x", POPULATION, _rejects_half, (Setting(conditions=1),))
    row = _measure(bad, bad.settings[0])
    assert row["share"] == 0.5 and row["verdict"] == "fail"


# --- the registered methods on a few hard settings ---------------------------------

HARD = [
    pytest.param(
        "paired_accuracy_difference",
        "interval",
        "mean_trial_accuracy",
        Setting(scenarios=20, icc=0.75, pair_corr=0.6, rate=0.85, difference=0.05),
        id="paired t interval, 20 scenarios, icc 0.75",
    ),
    pytest.param(
        "paired_accuracy_difference",
        "test",
        "mean_trial_accuracy",
        Setting(scenarios=20, icc=0.75, pair_corr=0.6, rate=0.85),
        id="paired t test, 20 scenarios, icc 0.75",
    ),
    pytest.param(
        "paired_binary_difference",
        "interval",
        "modal_accuracy",
        Setting(
            scenarios=50,
            icc=0.5,
            pair_corr=0.6,
            rate=0.85,
            difference=0.05,
            metric="modal_accuracy",
        ),
        id="Tango interval, 50 scenarios",
    ),
    pytest.param(
        "paired_binary_difference",
        "test",
        "modal_accuracy",
        Setting(scenarios=50, icc=0.5, pair_corr=0.6, rate=0.85, metric="modal_accuracy"),
        id="McNemar score test, 50 scenarios",
    ),
    pytest.param(
        "gee_accuracy",
        "interval",
        "mean_trial_accuracy",
        Setting(conditions=1, scenarios=106, icc=0.75, rate=0.85),
        id="GEE, 106 scenarios, icc 0.75",
    ),
    pytest.param(
        "rank_uncertainty (marginal)",
        "set",
        "rank",
        Setting(conditions=15, scenarios=106, icc=0.3, rate=0.55, difference=0.01),
        id="marginal rank intervals, 15 conditions",
    ),
    pytest.param(
        "rates(ci='cluster')",
        "interval",
        "mean_trial_accuracy",
        Setting(conditions=1, scenarios=10, icc=0.3, rate=0.85),
        id="rates cluster interval, 10 scenarios",
    ),
    pytest.param(
        "rates(ci='cluster')",
        "interval",
        "mean_trial_accuracy",
        Setting(conditions=1, scenarios=5, icc=0.3, rate=0.97),
        id="rates cluster interval, 5 scenarios (refused: NaN and a note)",
    ),
    pytest.param(
        "design_effect_bound (Table 2)",
        "bound",
        "mean_trial_accuracy",
        Setting(conditions=1, scenarios=50, icc=0.3, rate=0.5),
        id="Table 2's band no wider than a covering clustered interval (83% as an interval)",
    ),
    pytest.param(
        "make compare: Newcombe from counts",
        "interval",
        "mean_trial_accuracy",
        Setting(scenarios=106, icc=0.75, pair_corr=0.0, rate=0.5, difference=0.05),
        id="make compare from counts, these scenarios (70% against the population)",
    ),
    pytest.param(
        "make compare: clustered_change_bound",
        "bound",
        "mean_trial_accuracy",
        Setting(scenarios=20, icc=0.3, pair_corr=0.0, rate=0.5, difference=0.05),
        id="make compare's clustered bound no wider than a covering clustered interval",
    ),
    pytest.param(
        "clustered_accuracy(strata=pattern)",
        "interval",
        "mean_trial_accuracy",
        Setting(conditions=1, scenarios=10, icc=0.75, rate=0.85, pattern_effect=0.8),
        id="clustered_accuracy within patterns, 10 scenarios, icc 0.75 (bootstrap: 79%)",
    ),
    pytest.param(
        "gee_accuracy",
        "interval",
        "mean_trial_accuracy",
        Setting(conditions=1, scenarios=10, icc=0.0, rate=0.01),
        id="GEE, 10 scenarios, rate 0.01 (Wald on the logit: 74%)",
    ),
    pytest.param(
        "pass_hat_k (k=m)",
        "interval",
        "pass^m",
        Setting(conditions=1, scenarios=20, icc=0.75, rate=0.85),
        id="pass^5, 20 scenarios, icc 0.75 (bootstrap: 90%)",
    ),
    pytest.param(
        "rank_uncertainty_from_counts (simultaneous)",
        "set",
        "ranks",
        Setting(conditions=15, scenarios=106, icc=0.75, rate=0.55, difference=0.01),
        id="simultaneous rank sets from counts, 15 conditions, icc 0.75",
    ),
    pytest.param(
        "unpaired_reasoning",
        "test",
        "mean_trial_accuracy",
        Setting(scenarios=50, icc=0.3, pair_corr=0.0, rate=0.5),
        id="unpaired score test from counts, uncorrelated pairs, icc 0.3",
    ),
    pytest.param(
        "unpaired_reasoning(cells=...)",
        "test",
        "mean_trial_accuracy",
        Setting(scenarios=50, icc=0.75, pair_corr=0.0, rate=0.9),
        id="unpaired score test at the effective sizes, uncorrelated pairs, icc 0.75",
    ),
    pytest.param(
        "paired_accuracy_difference",
        "interval",
        "mean_trial_accuracy",
        Setting(scenarios=20, icc=0.75, pair_corr=0.9, rate=0.9, difference=0.05),
        id="paired t interval at its effective df, skewed differences near 1",
    ),
]


@pytest.mark.parametrize(("name", "kind", "quantity", "setting"), HARD)
def test_a_hard_setting_meets_the_standard(name, kind, quantity, setting):
    reps = 200 if name.startswith("rank") else REPS  # each release a leaderboard: slower
    row = _measure(_entry(name, kind, quantity), setting, reps)
    assert row["verdict"] in ("pass", "refused"), row  # refused: NaN and a note, no claim


# --- the registry and the docs' table ----------------------------------------------


def test_the_registry_names_each_entry_once_with_settings():
    keys = [(m.name, m.kind, m.quantity, m.estimand) for m in bench.REGISTRY]
    assert len(keys) == len(set(keys))
    assert all(m.settings for m in bench.REGISTRY)


def test_the_docs_table_is_the_one_the_benchmark_wrote_last():
    page = bench.TABLE.read_text("utf-8")
    rows = pd.read_csv(bench.ROWS)
    head, body = page.split("\n\n", 1)
    assert head.startswith("Generated by `python benchmarks/bench_calibration.py")
    assert body == bench.render(rows)
    measured = set(
        zip(rows["method"], rows["kind"], rows["quantity"], rows["estimand"], strict=True)
    )
    registered = {(m.name, m.kind, m.quantity, m.estimand) for m in bench.REGISTRY}
    assert registered <= measured, registered - measured
    inference = (paths.PROJECT_ROOT / "docs" / "inference.md").read_text("utf-8")
    assert "```{include} _generated/calibration.md" in inference
