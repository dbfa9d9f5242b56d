"""The published conditions: parsed counts, the cross-check, and Table 2."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pandas as pd
import published
import pytest

from analysis import paths
from analysis.corpus.formatting import percent_text, weighted_miss_text
from analysis.scoring.leaderboard import (
    CrossCheckError,
    interval_text,
    load_conditions,
    numerator_for,
)
from analysis.scoring.ranking import leaderboard_table, rank_conditions, trials_per_cell
from analysis.scoring.ratio import Ratio

COLUMNS = {  # Table 2 column -> leaderboard.json field
    "mean trial accuracy": "mean_trial_accuracy",
    "95% CI": "mean_trial_accuracy_ci95",
    "modal-of-5": "modal_accuracy",
    "modal 95% CI": "modal_accuracy_ci95",
    "pass5": "pass5",
    "pass5 95% CI": "pass5_ci95",
    "under-refusal": "under_refusal",
    "over-refusal": "over_refusal",
    "weighted miss": "weighted_miss",
}


def test_every_table2_cell_equals_the_published_string(conditions):
    rows = json.loads((paths.results_dir() / "leaderboard.json").read_text())["rows"]
    by_label = {f"{r['model']} ({r['reasoning']})": r for r in rows}
    table = leaderboard_table(rank_conditions(conditions))
    assert len(table) == published.CONDITIONS
    for row in table.to_dict("records"):
        source = by_label[row["condition"]]
        for column, field in COLUMNS.items():
            assert row[column] == source[field], (row["condition"], column)


def test_table2_names_its_reads_by_the_trials_per_cell(conditions):
    from analysis.paper.sections.leaderboard import table2_numbers

    three = conditions.assign(
        n_trials=3 * conditions["n_cells"], n_trials_correct=3 * conditions["n_pass5"]
    )
    table = leaderboard_table(rank_conditions(three))
    assert {"modal-of-3", "pass3", "pass3 95% CI"} <= set(table.columns)
    assert not {"modal-of-5", "pass5"} & set(table.columns)
    numbers = table2_numbers(rank_conditions(three)).set_index("name")
    described = numbers.loc[numbers.index.str.endswith(".pass5"), "description"]
    assert len(described) == len(conditions)
    assert described.str.endswith("pass3: cells correct on all 3 trials").all()
    mixed = three.copy()
    mixed.loc[0, "n_trials"] = 5 * mixed.loc[0, "n_cells"]
    with pytest.raises(ValueError, match=r"different trials per cell: \[3, 5\]"):
        trials_per_cell(mixed)


def test_counts_are_integers(conditions):
    counts = [c for c in conditions.columns if c.startswith("n_")]
    assert all(conditions[c].dtype == "int64" for c in counts)
    assert conditions["n_no_decision"].sum() == published.UNDECIDED_PROCEED_CELLS


def test_rank_order_and_leader(conditions):
    ranked = rank_conditions(conditions)
    leader = ranked.iloc[0]
    assert leader.label == published.LEADER[0]
    assert Ratio(leader.n_trials_correct, leader.n_trials).text() == f"{published.LEADER[1]}%"
    # ties on mean trial accuracy go to pass5: gpt-5.4-mini off (89.6%) before high (87.7%)
    labels = list(ranked.label)
    assert labels.index("gpt-5.4-mini (off)") < labels.index("gpt-5.4-mini (high)")


@pytest.fixture()
def results_copy(tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(paths.results_dir(), copy)
    return copy


def _edit_row(results, label, field, value):
    path = results / "leaderboard.json"
    board = json.loads(path.read_text())
    row = next(r for r in board["rows"] if f"{r['model']} ({r['reasoning']})" == label)
    row[field] = value
    path.write_text(json.dumps(board))


def test_changed_count_is_refused_naming_row_and_field(scenarios, results_copy):
    _edit_row(results_copy, "gpt-5.4-nano (off)", "modal_accuracy", "57.5% (62/106)")
    with pytest.raises(CrossCheckError) as refused:
        load_conditions(scenarios, results_copy)
    message = str(refused.value)
    assert "gpt-5.4-nano (off): modal_accuracy: published '57.5% (62/106)'" in message
    assert "recomputed from counts '58.5% (62/106)'" in message


def test_a_trial_accuracy_that_fits_no_count_says_where_the_trials_come_from(
    scenarios, results_copy
):
    manifest = results_copy / paths.RELEASE_MANIFEST
    pinned = json.loads(manifest.read_text())
    pinned["n_trials_per_cell"] = 7  # 742 trials of 106 cells: a published rate fits none
    manifest.write_text(json.dumps(pinned))
    with pytest.raises(CrossCheckError) as refused:
        load_conditions(scenarios, results_copy)
    pins = f"(106 cells x 7 trials, as {paths.RELEASE_MANIFEST} pins)"
    assert ": mean_trial_accuracy: '" in str(refused.value)
    assert f"' fits 0 counts out of 742 {pins}, not one" in str(refused.value)


def test_changed_interval_is_refused(scenarios, results_copy):
    _edit_row(results_copy, "kimi-k2.6 (off)", "pass5_ci95", "[77.0%, 90.4%]")
    with pytest.raises(CrossCheckError, match=r"kimi-k2.6 \(off\): pass5_ci95"):
        load_conditions(scenarios, results_copy)


def test_unexplained_denominator_is_refused(scenarios, results_copy):
    _edit_row(results_copy, "gpt-5.4 (off)", "over_refusal", "27.8% (15/54)")
    with pytest.raises(CrossCheckError, match=r"gpt-5.4 \(off\): modal_accuracy: 90 correct"):
        load_conditions(scenarios, results_copy)


def test_every_published_weighted_miss_is_a_count(scenarios, conditions):
    """Each of the published weighted misses is missed weight / weight of the decided cells,
    for a missed weight that every possible total agrees on; checked by a plain loop over
    the scenario weights, not by the parser."""
    rows = json.loads((paths.results_dir() / "leaderboard.json").read_text())["rows"]
    weights = dict(zip(scenarios["scenario_id"], scenarios["tier_weight"], strict=True))
    gates = dict(zip(scenarios["scenario_id"], scenarios["required_gate"].astype(str), strict=True))
    total = sum(weights.values())
    for row, parsed in zip(rows, conditions.itertuples(), strict=True):
        assert row["weighted_miss"] == weighted_miss_text(*parsed.weighted_miss_fit)
        assert not pd.isna(parsed.weight_missed), parsed.label
        missed, scored = parsed.weighted_miss_fit
        by_gate = {
            g: [weights[s] for s in weights if gates[s] == g] for g in ("allowed", "blocked")
        }
        n_out = {
            "allowed": len(by_gate["allowed"]) - parsed.n_proceed_opportunities,
            "blocked": len(by_gate["blocked"]) - parsed.n_hold_opportunities,
        }
        if sum(n_out.values()) == 0:
            assert scored == total
        else:  # v2026-05 leaves out at most one cell per condition
            assert sum(n_out.values()) == 1
            gate = next(g for g, n in n_out.items() if n)
            assert total - scored in set(by_gate[gate])
        assert parsed.n_under_refusals + parsed.n_over_refusals <= missed
    assert conditions["weight_scored"].isna().sum() == 1  # one undecided cell, weight unknown
    assert conditions["weighted_miss_counts"].str.contains(" or ").sum() == 1


def test_a_condition_keeps_its_leaderboard_name_and_knows_its_verdict_file_label(conditions):
    kimi = conditions[conditions["label"] == "kimi-k2.6 (on (provider default))"].iloc[0]
    assert kimi["condition"] == "kimi-k2.6 (on (provider default))"
    assert kimi["verdict_label"] == "kimi-k2.6 (on)"


def test_undecided_cells_are_not_limited_to_one_per_direction(scenarios, results_copy):
    # two proceed cells with no decision: 89/106 = 87 correct + 0 under + 17 over + 2 none
    row = {
        "modal_accuracy": "82.1% (87/106)",
        "over_refusal": "31.5% (17/54)",
        "weighted_miss": weighted_miss_text(33, 269),
    }
    for field, value in row.items():
        _edit_row(results_copy, "claude-sonnet-4.6 (off)", field, value)
    ci = interval_text(87, 106)
    _edit_row(results_copy, "claude-sonnet-4.6 (off)", "modal_accuracy_ci95", ci)
    conditions = load_conditions(scenarios, results_copy)
    parsed = conditions.set_index("label").loc["claude-sonnet-4.6 (off)"]
    assert parsed["n_no_decision"] == 2


def test_every_count_that_prints_a_percentage_is_found():
    # the search for a printed accuracy's count looks only near the printed value: every
    # count of these denominators is found again from its own string, and a string that two
    # counts print is reported as ambiguous rather than guessed
    ambiguous = 0
    for n in [*range(1, 121), 269, 270, 530, 1500]:
        texts = [percent_text(k, n) for k in range(n + 1)]
        fits = Counter(texts)
        for k, text in enumerate(texts):
            if fits[text] == 1:
                assert numerator_for({"f": text}, "row", "f", n) == k
            else:
                ambiguous += 1
                with pytest.raises(CrossCheckError, match=f"fits {fits[text]} counts"):
                    numerator_for({"f": text}, "row", "f", n)
    assert ambiguous  # 1500 trials print some accuracies twice


def test_a_zero_bound_printed_with_a_minus_sign_is_the_bound_zero():
    # toFixed prints a lower bound that computes as -1e-17 as "-0.0%": 0 of 2001 and 1 of
    # 2001 both print "0.0%", and the interval, either way its zero is signed, tells them apart
    assert percent_text(0, 2001) == percent_text(1, 2001) == "0.0%"
    unsigned = interval_text(0, 2001)
    assert unsigned.startswith("[0.0%, ") and unsigned != interval_text(1, 2001)
    for printed in (unsigned, unsigned.replace("[0.0%", "[-0.0%")):
        row = {"f": "0.0%", "f_ci95": printed}
        assert numerator_for(row, "row", "f", 2001) == 0
