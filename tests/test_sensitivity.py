"""The three sensitivity checks on the hand-worked verdict set (see test_breakdowns)."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
from test_breakdowns import hand_cells, hand_scenarios

from analysis.breakdowns import mirror_gap
from analysis.scenarios import load_scenarios
from analysis.sensitivity import (
    Directional,
    credit_hiring_mirrors,
    directional,
    relabelled_by_humans,
    relabelled_cells,
    sensitivity_table,
    without_credit_hiring_mirrors,
    without_derived_flags,
)

BASELINE = Directional(
    over_refusals=5, proceed_opportunities=11, under_refusals=1, hold_opportunities=6
)


def test_baseline_directional_totals() -> None:
    counts = directional(hand_cells())
    assert counts == BASELINE
    assert counts.over_rate == Fraction(5, 11)
    assert counts.under_rate == Fraction(1, 6)


def test_without_derived_flags() -> None:
    check = without_derived_flags(hand_cells(), hand_scenarios())
    assert check.excluded == ("anc-2", "mir-other")
    assert check.baseline == BASELINE
    assert check.without == Directional(4, 8, 0, 3)
    assert (check.conflict_correct, check.conflict_cells) == (1, 3)
    assert (check.mirror_correct, check.mirror_cells) == (3, 6)
    assert check.mirror_accuracy == Fraction(1, 2)


def test_relabelled_by_humans() -> None:
    check = relabelled_by_humans(hand_cells(), hand_scenarios())
    assert check.n_relabelled_scenarios == 1
    assert check.relabelled == Directional(3, 8, 2, 9)
    assert (check.n_correct, check.n_cells) == (12, 18)


def test_mirror_gap_under_human_labels() -> None:
    # The human majority holds mir-credit: its two blocked modals become right, its allowed
    # modal wrong, so mirrors go from 5/9 to 6/9 and the gap from 5/18 to 5/6 - 2/3 = 1/6.
    gap = mirror_gap(relabelled_cells(hand_cells(), hand_scenarios()), hand_scenarios())
    assert (gap.anchor_correct, gap.anchor_cells) == (5, 6)
    assert (gap.mirror_correct, gap.mirror_cells) == (6, 9)
    assert gap.gap == Fraction(1, 6)


def test_without_credit_hiring_mirrors() -> None:
    check = without_credit_hiring_mirrors(hand_cells(), hand_scenarios())
    assert check.excluded == ("mir-credit", "mir-hire")
    assert check.baseline == BASELINE
    assert check.without == Directional(2, 5, 1, 6)


def test_credit_hiring_mirrors_in_the_corpus() -> None:
    assert credit_hiring_mirrors(load_scenarios()) == (
        "amazon-hiring-mirror-advance-candidate-tier-b-005",
        "apple-card-mirror-credit-extension-tier-b-004",
    )


def test_hold_labelled_mirrors_are_not_excluded() -> None:
    scenarios = hand_scenarios()
    scenarios["required_gate"] = scenarios["required_gate"].where(
        scenarios["scenario_id"] != "mir-credit", "blocked"
    )
    assert credit_hiring_mirrors(scenarios) == ("mir-hire",)


def test_sensitivity_table_counts_are_integers() -> None:
    table = sensitivity_table(hand_cells(), hand_scenarios())
    assert list(table["check"]) == [
        "baseline",
        "without derived-flag rows",
        "human majority labels",
        "without credit/hiring mirrors",
    ]
    assert table["n_over_refusals"].tolist() == [5, 4, 3, 2]
    assert table["n_hold_opportunities"].tolist() == [6, 3, 9, 6]
    assert all(pd.api.types.is_integer_dtype(table[c]) for c in table.columns if c.startswith("n_"))
