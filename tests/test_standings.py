"""``standings``: published conditions, reference policies and runs ranked in one table, each
run's differences to the others; Table 2's ranking and printing on mixed inputs."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import (
    condition_scores,
    leaderboard_table,
    load_conditions,
    load_scenarios,
    load_trials,
    paths,
    rank_conditions,
    score_cells,
    standings,
)
from analysis.exploring.standings import IGNORED_BY_COUNTS
from analysis.inference._arrays import EFFECTIVE_SIZE_CP

N_BOOT = 200


@pytest.fixture(scope="module")
def scenarios():
    return load_scenarios()


@pytest.fixture(scope="module")
def conditions(scenarios):
    return load_conditions(scenarios)


@pytest.fixture(scope="module")
def reference_cells(scenarios):
    trials = load_trials([paths.runs_dir() / paths.REFERENCE_RUNS_NAME], scenarios=scenarios)
    return score_cells(trials, scenarios)


@pytest.fixture(scope="module")
def sample_cells(scenarios):
    trials = load_trials([paths.runs_dir() / paths.SAMPLE_RUN_NAME], scenarios=scenarios)
    return score_cells(trials, scenarios)


@pytest.fixture(scope="module")
def run_cells(reference_cells):
    """A run of surface-flag, named as the reference policy is: a condition of its own."""
    run = reference_cells[reference_cells["condition"] == "surface-flag (policy)"].copy()
    run["source"] = pd.Categorical(["run"] * len(run))
    return pd.concat([reference_cells.astype({"source": str}), run.astype({"source": str})])


def test_table2_ranks_and_prints_published_and_scored_conditions_together(
    conditions, reference_cells, sample_cells
):
    cells = pd.concat([reference_cells, sample_cells])
    table = leaderboard_table(rank_conditions(pd.concat([conditions, condition_scores(cells)])))
    assert len(table) == len(conditions) + 4
    assert table.columns[:3].tolist() == ["rank", "condition", "source"]
    sample = table[(table["source"] == "run")].iloc[0]
    assert sample["condition"] == "gpt-5.4-mini (off)"
    assert sample["over-refusal"] == "–"  # the sample cell has no proceed opportunity
    published = table[table["source"] == "published"]
    assert (published["weighted miss counts from"] != "per-trial verdicts").all()


def test_table2_prints_weighted_miss_of_scored_conditions(conditions, reference_cells):
    ranked = rank_conditions(pd.concat([conditions, condition_scores(reference_cells)]))
    table = leaderboard_table(ranked).set_index("condition")
    assert table.loc["surface-flag (policy)", "weighted miss counts"] == "40/271"
    assert table.loc["surface-flag (policy)", "weighted miss"] == "14.8%"
    assert table.loc["surface-flag (policy)", "weighted miss counts from"] == "per-trial verdicts"


def test_table2_of_the_published_conditions_alone_has_no_source_column(conditions):
    assert "source" not in leaderboard_table(rank_conditions(conditions)).columns


@pytest.mark.parametrize("call", [rank_conditions, leaderboard_table])
def test_table2_refuses_a_frame_without_counts_in_one_line(call, reference_cells):
    with pytest.raises(ValueError, match=r"^(conditions|ranked): not condition counts") as error:
        call(reference_cells)
    assert "\n" not in str(error.value)


def test_standings_rank_every_condition_by_its_source_and_name(conditions, run_cells):
    table = standings(conditions, run_cells, n_boot=N_BOOT)
    assert table["rank"].tolist() == list(range(1, len(conditions) + 5))
    assert table.groupby("source").size().to_dict() == {
        "published": 30,
        "reference-policy": 3,
        "run": 1,
    }
    same = table[table["condition"] == "surface-flag (policy)"]
    assert sorted(same["source"]) == ["reference-policy", "run"]
    published = table[table["source"] == "published"]
    assert published["interval"].str.startswith("clustered bound").all()
    assert (
        (published["ci_high"] - published["ci_low"])
        .ge(published["wilson_high"] - published["wilson_low"] - 1e-12)
        .all()
    )
    assert (same["interval"] == EFFECTIVE_SIZE_CP).all()
    assert (table["rank_low"] <= table["rank_high"]).all()
    leader = table.iloc[0]
    assert leader["mean trial accuracy"] == "92.8%" and leader["95% CI"] == "[90.3%, 94.7%]"


def test_standings_differences_pair_runs_with_reference_policies(conditions, run_cells):
    diffs = standings(conditions, run_cells, differences=True, n_boot=N_BOOT)
    paired = diffs[diffs["versus_source"] == "reference-policy"]
    assert set(paired["versus"]) == {
        "always-hold (policy)",
        "always-proceed (policy)",
        "surface-flag (policy)",
    }
    assert (paired["run"] == "surface-flag (policy)").all()
    assert (paired["pairing"] == "paired").all() and (paired["n_clusters"] == 106).all()
    hold = paired[(paired["versus"] == "always-hold (policy)")].set_index("metric")
    assert hold.loc["mean_trial_accuracy", "estimate"] == pytest.approx((430 - 250) / 530)
    assert hold.loc["mean_trial_accuracy", "ci_low"] > 0
    itself = paired[paired["versus"] == "surface-flag (policy)"].set_index("metric")
    assert itself.loc["mean_trial_accuracy", "estimate"] == 0
    counts = diffs[diffs["versus_source"] == "published"]
    assert len(counts) == 2 * len(conditions)
    assert (counts["ignores"] == IGNORED_BY_COUNTS).all()
    assert counts["ci_low"].le(counts["estimate"]).all()


def test_standings_without_runs_have_no_differences(conditions, reference_cells):
    diffs = standings(conditions, reference_cells, differences=True, n_boot=N_BOOT)
    assert diffs.empty and "ignores" in diffs.columns


def test_standings_refuse_cells_that_are_not_scored_cells(conditions):
    with pytest.raises(ValueError, match=r"^cells: not scored cells"):
        standings(conditions, conditions)


def test_own_runs_leave_the_release_sample_cell_aside(sample_cells, run_cells):
    from analysis.paper.sections.your_runs import own_runs

    cells = pd.concat([sample_cells.astype({"source": str}), run_cells])
    assert own_runs(cells, paths.runs_dir()) == ["surface-flag (policy)"]
    assert own_runs(sample_cells, paths.runs_dir()) == []
    assert own_runs(None, paths.runs_dir()) == []


def test_your_runs_tables_show_only_your_runs(conditions, run_cells):
    from analysis.paper.sections.your_runs import differences_table, runs_table

    table = runs_table(standings(conditions, run_cells, n_boot=N_BOOT), ["surface-flag (policy)"])
    assert table["condition"].tolist() == ["surface-flag (policy)"]
    assert table["rank"].iloc[0].endswith(" of 34")
    assert table["clustered 95% CI"].iloc[0].startswith("[")
    diffs = standings(conditions, run_cells, differences=True, n_boot=N_BOOT)
    paired = differences_table(diffs, ["surface-flag (policy)"])
    assert len(paired) == 6  # three reference policies, two metrics
    assert set(paired["reference policy"]) == {
        "always-hold (policy)",
        "always-proceed (policy)",
        "surface-flag (policy)",
    }
    hold = paired[paired["reference policy"] == "always-hold (policy)"].iloc[0]
    assert hold["difference (points)"] == "+34.0" and hold["p"] == "< 0.001"


def test_a_run_of_three_trials_per_cell_stands_beside_five(conditions, scenarios):
    trials = load_trials([paths.runs_dir() / paths.REFERENCE_RUNS_NAME], scenarios=scenarios)
    short = trials[(trials["trial"] <= 3) & (trials["condition"] == "surface-flag (policy)")]
    short = short.assign(source=pd.Categorical(["run"] * len(short)))
    cells = pd.concat([score_cells(trials, scenarios), score_cells(short, scenarios)])
    table = standings(conditions, cells, n_boot=N_BOOT)
    assert {"modal", "pass-all"} <= set(table.columns)  # no one count of trials names them
    run = table[table["source"] == "run"].iloc[0]
    assert run["n_trials"] == 3 * run["n_cells"]
    diffs = standings(conditions, cells, differences=True, n_boot=N_BOOT)
    assert (diffs.loc[diffs["versus_source"] == "reference-policy", "pairing"] == "paired").all()


def test_standings_refuse_scored_conditions_given_as_published(conditions, reference_cells):
    mixed = pd.concat([conditions, condition_scores(reference_cells)])
    with pytest.raises(ValueError, match=r"^conditions: published conditions only"):
        standings(mixed, reference_cells)
