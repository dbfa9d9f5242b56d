"""Per-trial breakdowns on a hand-worked three-condition verdict set."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest
from factories import (
    BREAKDOWN_CELLS,
    BREAKDOWN_STATUSES,
    M1,
    A,
    B,
    breakdown_cells,
    breakdown_scenarios,
    trials_frame,
)

from analysis.exploring.export import write_scenarios_detail
from analysis.scoring.breakdowns import (
    accuracy_by,
    hardest_scenarios,
    mirror_gap,
    pattern_gradient,
    per_condition_pattern_accuracy,
    pool_cells,
    pool_summary,
    severity_by_tier,
)
from analysis.scoring.ratio import Ratio
from analysis.scoring.reads import split_distribution, stability
from analysis.scoring.rules import score_cells
from analysis.trials import load_trials


def test_table3_counts_and_order() -> None:
    table = pattern_gradient(breakdown_cells(), breakdown_scenarios())
    assert list(table["boundary_pattern"]) == [
        "public_harm_anchor",
        "incident_mirror",
        "detector_conflict",
    ]
    assert list(table["n_scenarios"]) == [2, 3, 1]
    assert list(table["n_cells"]) == [6, 9, 3]
    assert list(table["n_correct"]) == [5, 5, 1]
    assert table["accuracy"].tolist() == pytest.approx([5 / 6, 5 / 9, 1 / 3])
    # one to three scenarios per pattern: no interval, and a note saying why
    assert table["accuracy_low"].isna().all() and table["accuracy_high"].isna().all()
    assert table["note"].tolist() == [
        f"no interval: {n} scenario(s), fewer than 10" for n in (2, 3, 1)
    ]
    assert (table["interval_level"] == 0.95).all()


def test_breakdown_intervals_name_their_method_and_level_and_need_ten_scenarios() -> None:
    from analysis.inference import MIN_CLUSTERS
    from analysis.scoring.intervals import MIN_SCENARIOS, with_wilson

    assert MIN_SCENARIOS == MIN_CLUSTERS
    frame = pd.DataFrame({"n_correct": [5, 9, 0], "n_cells": [9, 10, 30]})
    out = with_wilson(
        frame.assign(n_scenarios=[9, 10, 10]),
        "n_correct",
        "n_cells",
        "accuracy",
        scenarios="n_scenarios",
    )
    assert out.accuracy_low.isna().tolist() == [True, False, False]
    assert (
        out.interval_method.tolist()[1:]
        == ["Wilson on cells (each independent; ignores clustering by scenario)"] * 2
    )
    assert out.note.tolist() == ["no interval: 9 scenario(s), fewer than 10", "", ""]
    assert 0 < out.accuracy_high[2] < 0.15  # 0 of 30: an interval with width, not [0, 0]


def test_table3_counts_a_scenario_filtered_in_every_cell() -> None:
    """A scenario whose every cell the provider filtered leaves the cells and the accuracy
    but is one of its pattern's scenarios, as the release's pattern table counts it."""
    cells = breakdown_cells()
    scenarios = breakdown_scenarios()
    mirrors = scenarios.loc[scenarios["boundary_pattern"] == "incident_mirror", "scenario_id"]
    sid = str(mirrors.iloc[0])
    filtered = cells["scenario_id"].astype(str) == sid
    cells.loc[filtered, "provider_filtered"] = True
    cells.loc[filtered, "modal_scored"] = False
    table = pattern_gradient(cells, scenarios).set_index("boundary_pattern")
    assert table.loc["incident_mirror", ["n_scenarios", "n_cells"]].tolist() == [3, 9 - 3]


def test_table3_pools_the_published_conditions_and_keeps_each_run_alone() -> None:
    cells = pd.concat([breakdown_cells("published"), breakdown_cells("run")], ignore_index=True)
    table = pattern_gradient(cells, breakdown_scenarios())
    assert table.groupby("source")["n_cells"].sum().to_dict() == {
        "published": 18,
        "run: m1 (off)": 6,
        "run: m2 (off)": 6,
        "run: m3 (high)": 6,
    }


def test_a_named_set_of_runs_is_pooled_and_said_so() -> None:
    cells = pool_cells(breakdown_cells("run"), named=["m1 (off)", "m2 (off)"], name="my runs")
    assert sorted(cells["source"].unique()) == ["my runs", "run: m3 (high)"]
    assert "my runs: pooled over 2 conditions (m1 (off), m2 (off))" in pool_summary(cells)
    with pytest.raises(ValueError, match="no such condition"):
        pool_cells(breakdown_cells("run"), named=["m9 (off)"])


def test_mirror_gap_refuses_more_than_one_pool() -> None:
    with pytest.raises(ValueError, match="3 pools"):
        mirror_gap(breakdown_cells("run"), breakdown_scenarios())


def test_mirror_gap_is_an_exact_fraction() -> None:
    gap = mirror_gap(breakdown_cells(), breakdown_scenarios())
    assert (gap.anchor, gap.mirror, gap.conflict) == (Ratio(5, 6), Ratio(5, 9), Ratio(1, 3))
    assert gap.gap == Fraction(5, 18)
    assert gap.conflict_gap == Fraction(1, 2)


def test_per_condition_pattern_accuracy() -> None:
    table = per_condition_pattern_accuracy(breakdown_cells(), breakdown_scenarios())
    assert list(table["condition"]) == ["m1 (off)", "m2 (off)", "m3 (high)"]
    assert list(table["public_harm_anchor_correct"]) == [1, 2, 2]
    assert list(table["incident_mirror_correct"]) == [1, 1, 3]
    assert list(table["incident_mirror_cells"]) == [3, 3, 3]


def test_hardest_scenarios() -> None:
    table = hardest_scenarios(breakdown_cells(), breakdown_scenarios(), n=3)
    # anc-2, mir-hire and mir-other are all missed once in three: every one tied at the cut
    assert list(table["scenario_id"]) == ["dc-1", "mir-credit", "anc-2", "mir-hire", "mir-other"]
    assert list(table["n_wrong"]) == [2, 2, 1, 1, 1]
    assert list(table["n_conditions"]) == [3, 3, 3, 3, 3]
    assert len(hardest_scenarios(breakdown_cells(), breakdown_scenarios(), n=2)) == 2
    assert table.loc[0, "boundary_pattern"] == "detector_conflict"
    assert table.loc[1, "required_gate"] == A


def test_stability_ranks_and_flag() -> None:
    table = stability(breakdown_cells()).set_index("condition")
    assert table.loc["m1 (off)", "n_trials_correct"] == 18
    assert table.loc["m2 (off)", "n_trials_correct"] == 18
    assert table.loc["m3 (high)", "n_trials_correct"] == 25
    assert table["n_modal_correct"].to_dict() == {"m3 (high)": 5, "m1 (off)": 3, "m2 (off)": 3}
    assert table["n_pass5"].to_dict() == {"m3 (high)": 5, "m1 (off)": 2, "m2 (off)": 2}
    # Table 2's order: m1 and m2 tie on mean trial accuracy (18/30) and pass5 (2): by label
    assert table["rank_mean_trial_accuracy"].to_dict() == {
        "m3 (high)": 1,
        "m1 (off)": 2,
        "m2 (off)": 3,
    }
    assert table["rank_pass5"].to_dict() == {"m3 (high)": 1, "m1 (off)": 2, "m2 (off)": 2}
    assert not table["modal_vs_pass5_differ"].any()


def test_stability_flags_a_modal_reliability_split() -> None:
    cells = dict(BREAKDOWN_CELLS)
    cells[("anc-2", M1)] = [B, B, B, A, A]  # m1 now wins anc-2 by a 3-2 vote
    scored = score_cells(
        trials_frame(cells, BREAKDOWN_STATUSES, source="published"), breakdown_scenarios()
    )
    table = stability(scored).set_index("condition")
    assert table.loc["m1 (off)", "n_modal_correct"] == 4
    assert table.loc["m1 (off)", "rank_modal_accuracy"] == 2
    assert table.loc["m2 (off)", "rank_modal_accuracy"] == 3
    assert table.loc["m2 (off)", "rank_pass5"] == 2
    assert bool(table.loc["m2 (off)", "modal_vs_pass5_differ"])
    assert not bool(table.loc["m1 (off)", "modal_vs_pass5_differ"])


def test_split_distribution() -> None:
    table = split_distribution(breakdown_cells())
    m1 = table[table["condition"] == "m1 (off)"].set_index("split")["n_cells"].to_dict()
    assert m1 == {"5-0": 3, "4-0 +1 none": 1, "3-2": 2}
    m3 = table[table["condition"] == "m3 (high)"].set_index("split")["n_cells"].to_dict()
    assert m3 == {"5-0": 5, "0-0 +5 none": 1}
    assert table["n_cells"].sum() == 18


def test_severity_by_tier() -> None:
    """Only cells with a modal decision count: dc-1 under m3 (all parse failures) leaves both
    the misses and the weights."""
    severity = severity_by_tier(breakdown_cells(), breakdown_scenarios())
    by_tier = severity.by_tier.set_index("tier_weight")
    # weight 1: the three mirrors x 3 conditions; weight 2: anc-2 x 3 + dc-1 under m1, m2
    assert by_tier["n_cells"].to_dict() == {1: 9, 2: 5, 4: 3}
    # misses: mir-credit m1/m2, mir-other m1, mir-hire m2; anc-2 m1, dc-1 m2
    assert by_tier["n_misses"].to_dict() == {1: 4, 2: 2, 4: 0}
    assert by_tier["weight_missed"].to_dict() == {1: 4, 2: 4, 4: 0}
    by_condition = severity.by_condition.set_index("condition")
    assert by_condition["weight_scored"].to_dict() == {
        "m1 (off)": 11,
        "m2 (off)": 11,
        "m3 (high)": 9,
    }
    assert by_condition["weight_missed"].to_dict() == {"m1 (off)": 4, "m2 (off)": 4, "m3 (high)": 0}
    assert by_condition.loc["m1 (off)", ["misses_w1", "misses_w2", "misses_w4"]].tolist() == [
        2,
        1,
        0,
    ]
    assert by_condition.loc["m3 (high)", "weighted_miss"] == 0
    assert by_condition.loc["m2 (off)", "weighted_miss"] == pytest.approx(4 / 11)


def test_accuracy_by_domain() -> None:
    table = accuracy_by(breakdown_cells(), breakdown_scenarios(), "domain")
    m2 = table[table["condition"] == "m2 (off)"].set_index("domain")
    assert m2["n_cells"].to_dict() == {"finance": 2, "ops": 4}
    assert m2["n_correct"].to_dict() == {"finance": 1, "ops": 2}
    assert len(table) == 6


def test_release_format_round_trip(tmp_path: Path) -> None:
    scenarios = breakdown_scenarios()
    trials = trials_frame(BREAKDOWN_CELLS, BREAKDOWN_STATUSES, source="published")
    path = write_scenarios_detail(trials, scenarios, tmp_path / "scenarios-detail.json")
    loaded = load_trials([path], scenarios=scenarios)
    table = pattern_gradient(score_cells(loaded, scenarios), scenarios)
    assert list(table["n_correct"]) == [5, 5, 1]
    assert set(table["source"]) == {"published"}
