"""analysis.exploring.pairing: two conditions paired by scenario, and the paired test on it."""

from __future__ import annotations

import warnings

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


@pytest.fixture(scope="module")
def release_cells(scenarios):
    """The imported release's per-trial cells: the reference policies and the sample cell
    (gpt-5.4-mini (off), one scenario); no published per-trial verdicts."""
    from analysis.scoring.rules import score_cells
    from analysis.trials import NoPublishedVerdictsWarning, load_trials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoPublishedVerdictsWarning)
        trials = load_trials(scenarios=scenarios)
    if (trials["source"] == "published").any():
        pytest.skip("this release's per-trial verdicts are present")
    return score_cells(trials, scenarios)


def _says_what_is_missing(message: str) -> None:
    assert "no per-trial verdicts here for" in message
    assert "scenarios-detail.json" in message and "make data" in message
    assert "run of the model" in message and "steerbench-run" in message
    assert "flips(" not in message and "name the two conditions" not in message
    assert "\n" not in message


@pytest.mark.parametrize("model", ["gpt-5.4-mini", "gpt-5.4-nano"])
def test_a_published_model_without_its_verdicts_says_what_would_provide_them(release_cells, model):
    with pytest.raises(ValueError) as error:
        flips(release_cells, model=model)
    _says_what_is_missing(str(error.value))
    assert f"{model} (off)" in str(error.value) and f"{model} (high)" in str(error.value)


def test_the_sample_cell_is_named_as_what_the_data_hold(release_cells):
    with pytest.raises(ValueError, match=r"these data hold only gpt-5.4-mini \(off\) \(run, 1 "):
        flips(release_cells, model="gpt-5.4-mini")


def test_a_published_condition_without_its_verdicts_says_so(release_cells):
    with pytest.raises(ValueError) as error:
        flips(release_cells, "gpt-5.4-mini (off)", "gpt-5.4-mini (high)")
    _says_what_is_missing(str(error.value))
    assert "'gpt-5.4-mini (high)'" in str(error.value)
    assert "unknown condition" not in str(error.value)


def test_flip_test_on_too_few_pairs_says_what_would_give_a_test(release_cells):
    table = flips(release_cells, "gpt-5.4-mini (off)", "surface-flag (policy)")
    assert table["source"].iloc[0] == "run, reference-policy"
    assert table["first"].iloc[0] == "run: gpt-5.4-mini (off)"
    note = flip_test(table)["note"].iloc[0]
    assert note.startswith("no test: 1 paired scenario(s), fewer than 10")
    assert "run of the model" in note and "per-scenario verdict file" in note


def test_a_suggested_call_runs():
    """A model with three conditions and no floor-and-high pair: the message names two of
    them as a call, and that call works."""
    cells, _ = simulated_cells(n_models=1, n_scenarios=20, seed=1)
    third = cells.loc[cells["condition"] == "sim-01 (high)"].assign(
        reasoning="medium", condition="sim-01 (medium)"
    )
    cells = pd.concat([cells, third], ignore_index=True)
    with pytest.raises(ValueError) as error:
        flips(cells, model="sim-01")
    message = str(error.value)
    assert "name two of them: flips(data, 'sim-01 (high)', 'sim-01 (medium)')" in message
    assert len(flips(cells, "sim-01 (high)", "sim-01 (medium)")) == 20


def test_a_model_of_one_condition_suggests_no_call():
    cells, _ = simulated_cells(n_models=1, n_scenarios=20, seed=1)
    cells = cells.loc[cells["condition"] == "sim-01 (off)"]
    with pytest.raises(ValueError, match="needs a second condition of it") as error:
        flips(cells, model="sim-01")
    assert "flips(" not in str(error.value)


def test_a_run_named_like_a_policy_pairs_with_it_by_source():
    """Two sources holding one name: each side named as 'source: condition'."""
    run = hand_cells("run")
    policy = hand_cells("reference-policy")
    cells = pd.concat([run, policy], ignore_index=True)
    table = flips(cells, f"run: {LABEL_A}", f"reference-policy: {LABEL_A}")
    assert table[["first", "second"]].iloc[0].tolist() == [
        f"run: {LABEL_A}",
        f"reference-policy: {LABEL_A}",
    ]
    both = table.loc[table["change"] != "unpaired"]
    assert set(both["change"].astype(str)) <= {"both correct", "both wrong"}
    with pytest.raises(ValueError, match="name a side as 'source: condition'"):
        flips(cells, LABEL_A, LABEL_B)


def test_a_published_model_whose_verdicts_are_here_is_not_told_they_are_missing():
    """gpt-5.4-mini's published conditions present as published verdicts, with a third
    setting beside them (so no one floor-and-high pair): the message is about the pair."""
    cells, _ = simulated_cells(n_models=1, n_scenarios=20, seed=1)
    cells = cells.assign(
        source="published",
        model="gpt-5.4-mini",
        condition=cells["condition"].astype(str).str.replace("sim-01", "gpt-5.4-mini"),
    )
    assert len(flips(cells, model="gpt-5.4-mini")) == 20
    third = cells.loc[cells["condition"] == "gpt-5.4-mini (high)"].assign(
        reasoning="medium", condition="gpt-5.4-mini (medium)"
    )
    with pytest.raises(ValueError) as error:
        flips(pd.concat([cells, third], ignore_index=True), model="gpt-5.4-mini")
    assert "has no one floor and one high condition" in str(error.value)
    assert "no per-trial verdicts" not in str(error.value)
