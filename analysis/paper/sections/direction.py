"""Section ``03-direction``: the direction asymmetry's numbers, summary table and figure."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import pandas as pd

from analysis.paper.figures import PALETTE, legend_below, percent_axis, scatter_coinciding
from analysis.paper.provenance import numbers_table, ratio_number, value_number
from analysis.scoring.metrics import DirectionAsymmetry, with_rates

#: The summary table's rows: (quantity, number name).
SUMMARY_ROWS = (
    ("over-refusal", "direction.over_refusal"),
    ("under-refusal", "direction.under_refusal"),
    ("raw miss ratio", "direction.raw_ratio"),
    ("opportunity ratio", "direction.opportunity_ratio"),
    ("rate ratio", "direction.rate_ratio"),
    ("proceed cells with no decision", "direction.undecided_proceed_cells"),
    ("over-refusal, undecided scored as misses", "direction.over_refusal_undecided_as_misses"),
)


def direction_numbers(asym: DirectionAsymmetry) -> pd.DataFrame:
    """The headline's numbers (``direction.*``) from
    :func:`analysis.scoring.metrics.direction_asymmetry`."""
    return numbers_table(
        [
            ratio_number(
                "direction.over_refusal",
                asym.over.k,
                asym.over.n,
                "modal blocked on proceed-labelled cells with a decision, all conditions",
            ),
            ratio_number(
                "direction.under_refusal",
                asym.under.k,
                asym.under.n,
                "modal allowed on hold-labelled cells, all conditions",
            ),
            ratio_number(
                "direction.raw_ratio",
                asym.over.k,
                asym.under.k,
                "over-refusal misses per under-refusal miss",
                scale=1,
                unit=": 1",
            ),
            ratio_number(
                "direction.opportunity_ratio",
                asym.over.n,
                asym.under.n,
                "proceed opportunities per hold opportunity",
                scale=1,
                digits=2,
                unit=": 1",
            ),
            value_number(
                "direction.rate_ratio",
                asym.rate_ratio,
                "over-refusal rate over under-refusal rate",
                unit="ratio",
            ),
            value_number(
                "direction.undecided_proceed_cells",
                asym.undecided_proceed_cells,
                "proceed-labelled cells with no parseable decision",
                unit="cells",
                digits=None,
            ),
            ratio_number(
                "direction.over_refusal_undecided_as_misses",
                asym.over_undecided_as_misses.k,
                asym.over_undecided_as_misses.n,
                "over-refusal if the undecided cells counted as over-refusals",
            ),
        ]
    )


def direction_summary(recorded: Mapping[str, Mapping]) -> pd.DataFrame:
    """The summary table of the recorded ``direction.*`` numbers (as ``numbers.json`` holds
    them): quantity, value with its unit, and counts."""
    rows = []
    for quantity, name in SUMMARY_ROWS:
        entry = recorded[name]
        sep = "" if entry["unit"] == "%" else " "
        counts = f"{entry['numerator']} / {entry['denominator']}" if "numerator" in entry else ""
        rows.append(
            {
                "quantity": quantity,
                "value": f"{entry['value']}{sep}{entry['unit']}",
                "counts": counts,
            }
        )
    return pd.DataFrame(rows)


def over_under_figure(conditions: pd.DataFrame, gates: pd.DataFrame) -> plt.Figure:
    """Modal over- against under-refusal per condition; conditions at the same point share
    one marker, larger and labelled with their number; the degenerate gates as crosses."""
    rated = with_rates(conditions)
    gates = with_rates(gates)
    fig, ax = plt.subplots(figsize=(5.5, 5))
    scatter_coinciding(
        ax,
        100 * rated.under_refusal,
        100 * rated.over_refusal,
        size=28,
        label=f"published model condition (n = {len(rated)})",
        marker="o",
        color=PALETTE["blue"],
    )
    ax.scatter(
        100 * gates.under_refusal,
        100 * gates.over_refusal,
        marker="X",
        s=80,
        color=PALETTE["vermillion"],
        edgecolor="black",
        label="degenerate gate",
    )
    for gate in gates.itertuples():
        right, top = gate.under_refusal > 0.5, gate.over_refusal > 0.5
        ax.annotate(
            gate.condition,
            (100 * gate.under_refusal, 100 * gate.over_refusal),
            textcoords="offset points",
            xytext=(-9 if right else 9, -9 if top else 9),
            ha="right" if right else "left",
            va="top" if top else "bottom",
            fontsize=8,
        )
    ax.plot([0, 100], [0, 100], ls=":", marker="", color="0.5", lw=1, label="equal rates")
    ax.set(
        xlabel="Under-refusal (share of hold-labelled cells)",
        ylabel="Over-refusal (share of proceed-labelled cells)",
    )
    percent_axis(ax, "x")
    percent_axis(ax, "y")
    legend_below(ax)  # under the axes: no condition's marker hides behind it
    return fig
