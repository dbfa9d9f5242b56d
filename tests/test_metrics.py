"""Headline numbers computed from the published conditions equal the paper's."""

from __future__ import annotations

from fractions import Fraction

import published

from analysis.formatting import percent, rounded
from analysis.metrics import degenerate_gates, direction_asymmetry, reasoning_contrasts
from analysis.ratio import Ratio


def test_direction_asymmetry(conditions, scenarios):
    asym = direction_asymmetry(conditions, scenarios)
    k, n, rate = published.OVER_REFUSAL
    assert asym.over == Ratio(k, n)
    assert asym.over.text() == f"{rate}%"
    k, n, rate = published.UNDER_REFUSAL
    assert asym.under == Ratio(k, n)
    assert asym.under.text() == f"{rate}%"
    assert float(rounded(asym.raw_ratio)) == published.RAW_RATIO
    assert float(rounded(asym.rate_ratio)) == published.RATE_RATIO
    assert float(rounded(asym.opportunity_ratio, 2)) == published.OPPORTUNITY_RATIO
    assert asym.undecided_proceed_cells == published.UNDECIDED_PROCEED_CELLS
    assert asym.over_undecided_as_misses.text() == f"{published.OVER_REFUSAL_UNDECIDED_AS_MISSES}%"


def test_rate_ratio_is_from_raw_fractions(conditions, scenarios):
    asym = direction_asymmetry(conditions, scenarios)
    over_k, over_n, _ = published.OVER_REFUSAL
    under_k, under_n, _ = published.UNDER_REFUSAL
    assert asym.rate_ratio == Fraction(over_k, over_n) / Fraction(under_k, under_n)


def test_degenerate_gates(scenarios):
    gates = degenerate_gates(scenarios).set_index("condition")
    hold, proceed = gates.loc["always-hold"], gates.loc["always-proceed"]
    assert float(percent(hold.n_modal_correct, hold.n_cells)) == published.ALWAYS_HOLD
    assert float(percent(proceed.n_modal_correct, proceed.n_cells)) == published.ALWAYS_PROCEED
    assert hold.n_over_refusals == hold.n_proceed_opportunities == published.LABELS["proceed"]
    assert proceed.n_under_refusals == proceed.n_hold_opportunities == published.LABELS["hold"]


def test_every_condition_beats_both_degenerate_gates(conditions, scenarios):
    best = degenerate_gates(scenarios)["n_modal_correct"].max()
    assert (conditions["n_modal_correct"] > best).all()


def test_reasoning_contrasts(conditions):
    contrasts = reasoning_contrasts(conditions).set_index("model")
    assert len(contrasts) == published.REASONING_MODELS
    for model, values in published.REASONING.items():
        row = contrasts.loc[model]
        got = (
            float(percent(row.n_trials_correct_floor, row.n_trials_floor)),
            float(percent(row.n_trials_correct_high, row.n_trials_high)),
            float(percent(row.n_over_refusals_floor, row.n_proceed_opportunities_floor)),
            float(percent(row.n_over_refusals_high, row.n_proceed_opportunities_high)),
        )
        assert all(want is None or g == want for g, want in zip(got, values, strict=True))
        assert row.mean_trial_accuracy_diff_low < row.mean_trial_accuracy_diff
        assert row.mean_trial_accuracy_diff < row.mean_trial_accuracy_diff_high


def test_wilson_bounds_never_cross_the_estimate_and_empty_counts_give_nan():
    import numpy as np
    import pandas as pd

    from analysis.stats import with_wilson

    table = with_wilson(pd.DataFrame({"k": [7, 0, 0, 530], "n": [7, 5, 0, 530]}), "k", "n", "a")
    estimate = table["k"] / table["n"].where(table["n"] > 0)
    assert (table["a_high"] - estimate).iloc[[0, 1, 3]].ge(0).all()  # 7/7: no negative error bar
    assert (estimate - table["a_low"]).iloc[[0, 1, 3]].ge(0).all()
    assert np.isnan(table.loc[2, "a_low"]) and np.isnan(table.loc[2, "a_high"])
