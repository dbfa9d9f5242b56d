"""analysis.exploring.joined: trials and cells carry their scenario's and condition's labels."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.exploring.joined import SCENARIO_METADATA, with_metadata
from analysis.scoring.rules import score_cells
from analysis.trials import load_trials


@pytest.mark.filterwarnings("ignore::analysis.trials.NoPublishedVerdictsWarning")
def test_trials_and_cells_carry_the_scenario_labels(scenarios):
    trials = load_trials(scenarios=scenarios)
    joined = with_metadata(trials, scenarios)
    assert list(joined.columns[: len(trials.columns)]) == list(trials.columns)
    assert len(joined) == len(trials)
    merged = trials.merge(scenarios, on="scenario_id", suffixes=("", "_s"))
    for column in SCENARIO_METADATA:
        assert isinstance(joined[column].dtype, pd.CategoricalDtype), column
        assert joined[column].astype(str).tolist() == merged[column].astype(str).tolist()
    cells = with_metadata(score_cells(trials, scenarios), scenarios)
    assert set(SCENARIO_METADATA) <= set(cells.columns)


def test_reasoning_level_only_where_a_model_has_one_floor_and_one_high():
    scenarios = pd.DataFrame({"scenario_id": ["s"], **{c: ["x"] for c in SCENARIO_METADATA}})
    frame = pd.DataFrame(
        {
            "scenario_id": "s",
            "source": "run",
            "model": ["m", "m", "three", "three", "three", "alone"],
            "reasoning": ["off", "high", "off", "medium", "high", "off"],
        }
    )
    frame["condition"] = frame["model"] + " (" + frame["reasoning"] + ")"
    levels = with_metadata(frame, scenarios)["reasoning_level"]
    assert levels.tolist()[:2] == ["floor", "high"]
    assert levels.iloc[2:].isna().all()
    assert list(levels.cat.categories) == ["floor", "high"]


def test_an_unknown_scenario_is_named():
    scenarios = pd.DataFrame({"scenario_id": ["s"], **{c: ["x"] for c in SCENARIO_METADATA}})
    frame = pd.DataFrame(
        {
            "scenario_id": ["zz"],
            "source": "run",
            "model": "m",
            "reasoning": "off",
            "condition": "m (off)",
        }
    )
    with pytest.raises(ValueError, match=r"not in the scenarios table: \['zz'\]"):
        with_metadata(frame, scenarios)
