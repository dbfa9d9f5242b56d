"""Headline numbers computed from the published conditions equal the paper's."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import published
import pytest

from analysis.corpus.formatting import percent, rounded
from analysis.scoring.metrics import (
    Directional,
    degenerate_gates,
    direction_asymmetry,
    reasoning_contrasts,
    reasoning_pairs,
)
from analysis.scoring.ratio import Ratio


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


def test_direction_asymmetry_takes_one_source_covering_every_scenario(conditions, scenarios):
    mixed = pd.concat([conditions, conditions.assign(source="run")], ignore_index=True)
    with pytest.raises(ValueError, match=r"conditions of 2 sources given \(published, run\)"):
        direction_asymmetry(mixed, scenarios)
    partial = conditions.head(1).assign(
        n_cells=4, n_left_out=0, n_proceed_opportunities=2, n_over_refusals=0
    )
    with pytest.raises(ValueError, match=r"which these conditions do not cover: gpt-5\.4-nano"):
        direction_asymmetry(partial, scenarios)


def test_a_ratio_over_no_under_refusal_says_it_is_undefined():
    none_under = Directional(over=Ratio(3, 10), under=Ratio(0, 10))
    with pytest.raises(ZeroDivisionError, match="rate ratio: no under-refusal"):
        _ = none_under.rate_ratio
    with pytest.raises(ZeroDivisionError, match="raw ratio: no under-refusal"):
        _ = none_under.raw_ratio


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

    from analysis.scoring.intervals import with_wilson

    table = with_wilson(pd.DataFrame({"k": [7, 0, 0, 530], "n": [7, 5, 0, 530]}), "k", "n", "a")
    estimate = table["k"] / table["n"].where(table["n"] > 0)
    assert (table["a_high"] - estimate).iloc[[0, 1, 3]].ge(0).all()  # 7/7: no negative error bar
    assert (estimate - table["a_low"]).iloc[[0, 1, 3]].ge(0).all()
    assert np.isnan(table.loc[2, "a_low"]) and np.isnan(table.loc[2, "a_high"])


def _condition_counts(model: str, reasoning: str, level: str, correct: int) -> dict:
    return {
        "model": model,
        "reasoning": reasoning,
        "reasoning_level": level,
        "n_trials_correct": correct,
        "n_trials": 10,
        "n_over_refusals": 1,
        "n_proceed_opportunities": 4,
        "n_modal_correct": 1,
        "n_cells": 2,
        "n_under_refusals": 0,
        "n_hold_opportunities": 1,
    }


def test_reasoning_pairs_take_one_floor_and_one_high_row_per_model():
    rows = [
        _condition_counts("a", "off", "floor", 5),
        _condition_counts("a", "high", "high", 7),
        _condition_counts("b", "off", "floor", 5),  # two settings above its floor: no one pair
        _condition_counts("b", "medium", "high", 6),
        _condition_counts("b", "high", "high", 8),
        _condition_counts("c", "minimal", "floor", 4),  # no high row
    ]
    pairs = reasoning_pairs(pd.DataFrame(rows))
    assert pairs["model"].tolist() == ["a"]
    assert pairs[["n_trials_correct_floor", "n_trials_correct_high"]].values.tolist() == [[5, 7]]
    assert pairs[["reasoning_floor", "reasoning_high"]].values.tolist() == [["off", "high"]]


def test_reasoning_contrasts_without_any_pair_are_empty():
    only_floor = pd.DataFrame([_condition_counts("c", "off", "floor", 4)])
    contrasts = reasoning_contrasts(only_floor)
    assert contrasts.empty and "mean_trial_accuracy_diff" in contrasts.columns


def test_wilson_interval_of_nothing_is_nan_without_a_warning():
    import warnings

    import numpy as np

    from analysis.scoring.intervals import wilson_interval

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = wilson_interval(0, 0)
        lows, _ = wilson_interval(np.array([0, 3]), np.array([0, 5]))
    assert np.isnan(low) and np.isnan(high)
    assert np.isnan(lows[0]) and lows[1] == pytest.approx(0.2307, abs=1e-4)
