"""analysis.exploring.rate_table.rates: every metric by any column, Wilson or clustered
intervals, each condition (source and name) kept apart unless pooled on request."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from factories import (
    HAND_CONDITION_SCORES,
    LABEL_A,
    LABEL_B,
    hand_cells,
    scenarios_frame,
    trials_frame,
)
from statsmodels.stats.proportion import proportion_confint

from analysis.exploring.rate_table import (
    MODIFIED_WILSON,
    POOL_COLUMNS,
    RATE_COLUMNS,
    modified_wilson,
    rates,
)
from analysis.inference.simulate import simulate_release
from analysis.scoring.rules import condition_scores, score_cells

#: Each metric's (numerator, denominator) in the condition counts, worked out independently.
COUNTS = {
    "mean_trial_accuracy": ("n_trials_correct", "n_trials"),
    "modal_accuracy": ("n_modal_correct", "n_cells"),
    "pass5": ("n_pass5", "n_cells"),
    "over_refusal": ("n_over_refusals", "n_proceed_opportunities"),
    "under_refusal": ("n_under_refusals", "n_hold_opportunities"),
    "weighted_miss": ("weight_missed", "weight_scored"),
}


@pytest.mark.parametrize("metric", list(COUNTS))
def test_counts_by_condition_are_the_hand_worked_ones(metric):
    """Ties, cells without a modal decision and a provider-filtered cell, as worked by hand."""
    ci = "cluster" if metric == "weighted_miss" else "wilson"
    out = rates(hand_cells(), by="condition", metric=metric, ci=ci)
    assert list(out.columns) == ["source", "condition", *RATE_COLUMNS]
    k, n = COUNTS[metric]
    for label in (LABEL_A, LABEL_B):
        row = out.loc[out["condition"] == label].iloc[0]
        assert (row["k"], row["n"]) == (
            HAND_CONDITION_SCORES[label][k],
            HAND_CONDITION_SCORES[label][n],
        )
        assert row["estimate"] == pytest.approx(row["k"] / row["n"])


def test_wilson_bounds_are_statsmodels_and_say_what_they_assume():
    out = rates(
        hand_cells(), by="condition", metric=["mean_trial_accuracy", "over_refusal"], ci="wilson"
    )
    for row in out.itertuples():
        low, high = proportion_confint(row.k, row.n, method="wilson")
        if 1 <= row.k <= 3 or 1 <= row.n - row.k <= 3:  # widened by the Poisson bound (below)
            assert row.ci_low <= low + 1e-12 and row.ci_high >= high - 1e-12
        else:
            assert (row.ci_low, row.ci_high) == pytest.approx((low, high))
    methods = dict(zip(out["metric"], out["method"], strict=False))
    assert methods["mean_trial_accuracy"] == f"{MODIFIED_WILSON} (treats each trial as independent)"
    assert methods["over_refusal"] == f"{MODIFIED_WILSON} (treats each cell as independent)"


@pytest.mark.parametrize(("k", "n"), [(1, 50), (2, 50), (3, 100), (97, 100), (3, 50), (25, 50)])
def test_the_wilson_interval_takes_the_exact_poisson_bound_at_one_to_three(k, n):
    """Brown, Cai and DasGupta's modification: the Poisson (Garwood) bound, here from scipy's
    gamma quantile, where it is wider, at 1 to 2 (n <= 50) or 3 successes or failures."""
    from scipy import stats

    low, high = proportion_confint(k, n, method="wilson")
    most = 2 if n <= 50 else 3
    if 1 <= k <= most:
        low = min(low, stats.gamma.ppf(0.025, k) / n)
    if 1 <= n - k <= most:
        high = max(high, 1 - stats.gamma.ppf(0.025, n - k) / n)
    assert modified_wilson(k, n) == pytest.approx((low, high))
    if k in (1, 2, 3) and (k <= most):
        assert modified_wilson(k, n)[0] < proportion_confint(k, n, method="wilson")[0]


def test_counts_match_condition_scores_on_a_simulated_release():
    trials, scenarios, _ = simulate_release(n_models=3, n_scenarios=50, n_trials=3, seed=4)
    cells = score_cells(trials, scenarios)
    expected = condition_scores(cells).set_index("condition")
    metrics = ["mean_trial_accuracy", "modal_accuracy", "pass3", "over_refusal", "under_refusal"]
    out = rates(trials, by="condition", metric=metrics, ci="wilson", scenarios=scenarios)
    for row in out.itertuples():
        k, n = COUNTS["pass5" if row.metric == "pass3" else row.metric]
        assert (row.k, row.n) == (expected.loc[row.condition, k], expected.loc[row.condition, n])


def test_by_a_scenario_column_joins_it_and_groups_as_a_merge_would():
    trials, scenarios, _ = simulate_release(n_models=1, n_scenarios=40, seed=3)
    cells = score_cells(trials, scenarios)
    out = rates(
        cells,
        by=["boundary_pattern", "condition"],
        metric="modal_accuracy",
        ci="wilson",
        scenarios=scenarios,
    )
    merged = cells.merge(scenarios[["scenario_id", "boundary_pattern"]], on="scenario_id")
    merged = merged.loc[merged["modal_scored"]]
    expected = merged.groupby(["boundary_pattern", "condition"], observed=True)[
        "modal_correct"
    ].agg(["sum", "size"])
    got = out.set_index(["boundary_pattern", "condition"])[["k", "n"]]
    assert got.to_numpy().tolist() == expected.to_numpy().tolist()
    assert got.index.tolist() == [tuple(map(str, i)) for i in expected.index]


def test_an_empty_denominator_is_nan_without_a_warning():
    cells = hand_cells()
    only_holds = cells.loc[cells["required_gate"] == "blocked"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ci in ("wilson", "cluster"):
            out = rates(only_holds, by="condition", metric="over_refusal", ci=ci)
            assert (out["n"] == 0).all()
            assert out[["estimate", "ci_low", "ci_high"]].isna().all().all()


def test_no_by_gives_one_row_per_condition_and_pool_adds_them_saying_which():
    out = rates(hand_cells(), metric=["modal_accuracy", "pass5"], ci="wilson")
    assert out[["condition", "metric"]].astype(str).to_numpy().tolist() == [
        [LABEL_A, "modal_accuracy"],
        [LABEL_B, "modal_accuracy"],
        [LABEL_A, "pass5"],
        [LABEL_B, "pass5"],
    ]
    pooled = rates(hand_cells(), metric=["modal_accuracy", "pass5"], ci="wilson", pool=True)
    assert list(pooled.columns) == [*RATE_COLUMNS, *POOL_COLUMNS]
    assert pooled[["metric", "k", "n", "n_conditions"]].to_numpy().tolist() == [
        ["modal_accuracy", 4, 7, 2],
        ["pass5", 2, 7, 2],
    ]
    assert set(pooled["conditions"]) == {f"run: {LABEL_A}; run: {LABEL_B}"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"metric": "accuracy"}, "unknown metric 'accuracy'; choices: mean_trial_accuracy"),
        ({"by": "planet"}, "unknown column(s) ['planet']"),
        (
            {"metric": "pass5"},
            "metric 'pass5' needs 5 trials in every cell; these cells hold 3 (choose pass3",
        ),
        ({"metric": "weighted_miss", "ci": "wilson"}, "the Wilson interval does not apply"),
        ({"ci": "normal"}, "unknown ci 'normal'; choices: cluster, wilson"),
    ],
)
def test_what_the_data_cannot_give_is_one_value_error_naming_the_choices(options, message):
    key = ("s-go-1", ("m", "off"))
    trials = trials_frame({key: ["allowed", "allowed", "blocked"]})
    scenarios = scenarios_frame({"s-go-1": ("proceed", "none")}).assign(domain="ops")
    with pytest.raises(ValueError) as error:
        rates(trials, scenarios=scenarios, **options)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_the_unknown_column_message_names_the_joinable_columns():
    scenarios = scenarios_frame().assign(domain="ops")
    with pytest.raises(ValueError, match=r"choices: .*domain.*reasoning_level"):
        rates(hand_cells(), by="domian", scenarios=scenarios)


def test_categorical_by_columns_keep_their_categories():
    out = rates(hand_cells(), by="source", ci="wilson")
    assert isinstance(out["source"].dtype, pd.CategoricalDtype)
    assert out[["source", "condition"]].astype(str).to_numpy().tolist() == [
        ["run", LABEL_A],
        ["run", LABEL_B],
    ]
