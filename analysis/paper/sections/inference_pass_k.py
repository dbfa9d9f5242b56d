"""Does a condition get every trial right? Section ``10-inference``'s pass^k: the figure of
pass^k against k, and the checks that pass^1 is mean trial accuracy and pass^n the
all-trials read.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.paper.figures import first_and_last, percent_axis, tight_layout
from analysis.scoring.ranking import read_names

MARKERS = "os^vDP*xh+"
#: Conditions a pass^k figure draws, each named in its legend; beyond this many, the half
#: with the highest pass^k at the largest k and the half with the lowest.
PASS_K_LINES = 12


def pass_k_figure(passk: pd.DataFrame, title: str) -> plt.Figure:
    """pass^k against k, one line per condition, named in a legend beside the axes and
    ordered by pass^k at the largest k, highest first; beyond :data:`PASS_K_LINES`
    conditions, the highest and the lowest (the title says how many of how many)."""
    top = int(passk["k"].max())
    ranked = passk.loc[passk["k"] == top].sort_values(
        ["estimate", "condition"], ascending=[False, True], kind="stable", na_position="last"
    )
    shown, _ = first_and_last(ranked, PASS_K_LINES)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for i, condition in enumerate(shown["condition"]):
        part = passk.loc[passk["condition"] == condition].sort_values("k")
        ax.plot(
            part.k,
            100 * part.estimate,
            marker=MARKERS[i % len(MARKERS)],
            color=str(0.1 + 0.2 * (i % 4)),  # with the ten markers, 20 distinct lines
            lw=1,
            ms=4,
            label=condition,
        )
    if len(shown) < len(ranked):
        half = len(shown) // 2
        title += (
            f"\n(the {half} highest and {len(shown) - half} lowest pass^{top} of "
            f"{len(ranked)} conditions; the table has all)"
        )
    ax.set(xlabel="k", ylabel="pass^k", title=title, xticks=sorted(passk.k.unique()))
    percent_axis(ax, "y")  # a probability: 0-100%, as every rate figure
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
    tight_layout(fig)
    return fig


def pass_k_checks(passk: pd.DataFrame, accuracy: pd.DataFrame, cells: pd.DataFrame) -> str:
    """Two lines: whether pass^1 equals mean trial accuracy, and pass^n the all-trials read
    (pass5 at five trials per cell)."""
    k_top = int(passk.k.max()) if len(passk) else 0
    first = passk[passk.k == 1].merge(
        accuracy[["source", "condition", "estimate"]],
        on=["source", "condition"],
        suffixes=("", "_mean_trial"),
    )
    decided = cells[cells.modal_scored.to_numpy(dtype=bool)]
    pass_all = (
        decided.groupby(["source", "condition"], observed=True)["pass_all"]
        .mean()
        .rename("pass5")
        .reset_index()
    )
    pass_all[["source", "condition"]] = pass_all[["source", "condition"]].astype(str)
    last = passk[passk.k == k_top].merge(pass_all, on=["source", "condition"])
    return (
        f"pass^1 equals mean trial accuracy: "
        f"{bool(np.allclose(first.estimate, first.estimate_mean_trial))}\n"
        f"pass^{k_top} equals {read_names(k_top)['pass']} (every trial correct): "
        f"{bool(np.allclose(last.estimate, last.pass5))}"
    )
