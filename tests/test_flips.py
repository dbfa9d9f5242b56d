"""analysis.exploring.pairing: two conditions paired by scenario, and the paired test on it."""

from __future__ import annotations

import pandas as pd
import pytest
from factories import LABEL_A, LABEL_B, hand_cells

from analysis.exploring.pairing import FLIP_COLUMNS, flip_test, flips
from analysis.inference import paired_binary_difference
from analysis.inference.simulate import simulated_cells


def test_a_models_floor_and_high_side_by_side_agree_with_the_paired_inference():
    cells, _ = simulated_cells(n_models=2, n_scenarios=60, seed=5)
    table = flips(cells, model="sim-02")
    assert list(table.columns) == list(FLIP_COLUMNS)
    assert (table["first"] == "sim-02 (off)").all() and (table["second"] == "sim-02 (high)").all()
    assert table["scenario_id"].is_unique and len(table) == 60
    test = flip_test(table).iloc[0]
    paired = paired_binary_difference(cells)
    expected = paired.loc[paired["contrast"] == "sim-02: high - off"].iloc[0]
    assert (test["fixed"], test["broke"]) == (expected["only_high"], expected["only_floor"])
    assert (test["both"], test["neither"]) == (expected["both"], expected["neither"])
    for column in ("estimate", "ci_low", "ci_high", "p"):
        assert test[column] == pytest.approx(expected[column])


def test_each_change_follows_both_sides_correctness():
    """Hand cells: model-a's s-go-2 has no modal decision and model-b's s-hold-1 is
    provider-filtered, so neither scenario is paired."""
    table = flips(hand_cells(), LABEL_A, LABEL_B).set_index("scenario_id")
    assert table["change"].astype(str).to_dict() == {
        "s-go-1": "fixed",  # a: tie broken to blocked (over-refusal); b: allowed
        "s-go-2": "unpaired",  # a: no modal decision
        "s-hold-1": "unpaired",  # b: provider-filtered
        "s-hold-2": "fixed",  # a: allowed (under-refusal); b: blocked
    }
    assert pd.isna(table.loc["s-hold-1", "second_decision"])
    assert pd.isna(table.loc["s-hold-1", "second_correct"])
    assert table.loc["s-go-1", "first_accuracy"] == pytest.approx(2 / 5)
    assert table["first_correct"].dtype == "boolean"
    test = flip_test(table.reset_index()).iloc[0]
    assert (test["n_clusters"], test["n_unpaired"], test["fixed"]) == (2, 2, 2)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "model-a"}, "model 'model-a' has no one floor and one high condition"),
        ({"model": "nobody"}, "unknown model 'nobody'; choices: model-a, model-b"),
        ({"first": LABEL_A, "second": "x (off)"}, "unknown condition 'x (off)'; choices:"),
        ({"first": LABEL_A}, "give two conditions (first, second) or a model"),
    ],
)
def test_a_pair_that_is_not_there_is_one_value_error(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        flips(hand_cells(), **options)


def test_conditions_in_two_sources_need_the_source_named():
    cells = pd.concat([hand_cells("run"), hand_cells("reference-policy")], ignore_index=True)
    with pytest.raises(ValueError, match="several sources"):
        flips(cells, LABEL_A, LABEL_B)
    assert (flips(cells, LABEL_A, LABEL_B, source="run")["source"] == "run").all()
