"""The three sensitivity checks on the hand-worked breakdown set (``factories.py``)."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
from factories import breakdown_cells, breakdown_scenarios

from analysis.corpus.scenarios import load_scenarios
from analysis.scoring.breakdowns import mirror_gap
from analysis.scoring.ratio import Ratio
from analysis.scoring.sensitivity import (
    Directional,
    credit_hiring_mirrors,
    directional,
    relabelled_by_humans,
    relabelled_cells,
    sensitivity_table,
    without_credit_hiring_mirrors,
    without_derived_flags,
)

# Over the breakdown set's directionally scored cells (dc-1 / m3 has no modal decision):
# proceed opportunities 3 mirrors x 3 + dc-1 x 2 = 11, of which over-refusals mir-credit m1,
# mir-other m1, mir-credit m2, mir-hire m2, dc-1 m2 = 5; hold opportunities 2 anchors x 3 = 6,
# of which under-refusals anc-2 m1 = 1.
BASELINE = Directional(over=Ratio(5, 11), under=Ratio(1, 6))


def test_baseline_directional_totals() -> None:
    assert directional(breakdown_cells()) == BASELINE


def test_without_derived_flags() -> None:
    check = without_derived_flags(breakdown_cells(), breakdown_scenarios())
    assert check.excluded == ("anc-2", "mir-other")
    assert check.baseline == BASELINE
    assert check.without == Directional(over=Ratio(4, 8), under=Ratio(0, 3))
    assert check.conflict == Ratio(1, 3)
    assert check.mirror == Ratio(3, 6)


def test_relabelled_by_humans() -> None:
    check = relabelled_by_humans(breakdown_cells(), breakdown_scenarios())
    assert check.n_relabelled_scenarios == 1
    assert check.relabelled == Directional(over=Ratio(3, 8), under=Ratio(2, 9))
    assert check.accuracy == Ratio(12, 18)


def test_mirror_gap_under_human_labels() -> None:
    # The human majority holds mir-credit: its two blocked modals become right, its allowed
    # modal wrong, so mirrors go from 5/9 to 6/9 and the gap from 5/18 to 5/6 - 2/3 = 1/6.
    gap = mirror_gap(
        relabelled_cells(breakdown_cells(), breakdown_scenarios()), breakdown_scenarios()
    )
    assert gap.anchor == Ratio(5, 6)
    assert gap.mirror == Ratio(6, 9)
    assert gap.gap == Fraction(1, 6)


def test_without_credit_hiring_mirrors() -> None:
    check = without_credit_hiring_mirrors(breakdown_cells(), breakdown_scenarios())
    assert check.excluded == ("mir-credit", "mir-hire")
    assert check.baseline == BASELINE
    assert check.without == Directional(over=Ratio(2, 5), under=Ratio(1, 6))


def test_credit_hiring_mirrors_in_the_corpus() -> None:
    assert credit_hiring_mirrors(load_scenarios()) == (
        "amazon-hiring-mirror-advance-candidate-tier-b-005",
        "apple-card-mirror-credit-extension-tier-b-004",
    )


def test_hold_labelled_mirrors_are_not_excluded() -> None:
    scenarios = breakdown_scenarios()
    scenarios["required_gate"] = scenarios["required_gate"].where(
        scenarios["scenario_id"] != "mir-credit", "blocked"
    )
    assert credit_hiring_mirrors(scenarios) == ("mir-hire",)


def test_sensitivity_table_counts_are_integers() -> None:
    table = sensitivity_table(breakdown_cells(), breakdown_scenarios())
    assert list(table["check"]) == [
        "baseline",
        "without derived-flag rows",
        "human majority labels",
        "without credit/hiring mirrors",
    ]
    assert table["n_over_refusals"].tolist() == [5, 4, 3, 2]
    assert table["n_hold_opportunities"].tolist() == [6, 3, 9, 6]
    assert all(pd.api.types.is_integer_dtype(table[c]) for c in table.columns if c.startswith("n_"))
