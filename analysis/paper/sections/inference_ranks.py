"""How sure is each condition's rank? Section ``10-inference``'s rank uncertainty: the
columns its tables show, the numbers recorded from the published counts, and the figure of
each condition's rank with its intervals.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from analysis.paper.figures import PAIR, first_and_last, legend_below, tight_layout
from analysis.paper.presentation import reader_columns
from analysis.paper.provenance import numbers_table, slug, value_number


def ranks_columns(ranks: pd.DataFrame) -> list[str]:
    """Rank uncertainty's columns for a reader (the source and the empty cluster count left
    out)."""
    return reader_columns(ranks, ["source", "n_clusters"])


def published_rank_numbers(ranks: pd.DataFrame) -> pd.DataFrame:
    """P(first) and the 95% rank interval of each condition of
    :func:`analysis.inference.rank_uncertainty_from_counts`."""
    note = "parametric bootstrap from published counts (trials independent)"
    rows = []
    for row in ranks.itertuples():
        base = f"inference.rank.{slug(row.condition)}"
        rows += [
            value_number(
                f"{base}.p_first",
                float(row.p_first),
                f"probability of ranking first (ties shared), {note}",
                unit="probability",
                digits=3,
            ),
            value_number(
                f"{base}.rank_low",
                int(row.rank_low),
                f"rank 95% interval, lower end, {note}",
                unit="rank",
                digits=None,
            ),
            value_number(
                f"{base}.rank_high",
                int(row.rank_high),
                f"rank 95% interval, upper end, {note}",
                unit="rank",
                digits=None,
            ),
            value_number(
                f"{base}.rank_low_joint",
                int(row.rank_low_joint),
                f"simultaneous 95% rank set (all conditions at once), lower end, {note}",
                unit="rank",
                digits=None,
            ),
            value_number(
                f"{base}.rank_high_joint",
                int(row.rank_high_joint),
                f"simultaneous 95% rank set (all conditions at once), upper end, {note}",
                unit="rank",
                digits=None,
            ),
        ]
    return numbers_table(rows)


def rank_figure(ranks: pd.DataFrame, title: str) -> plt.Figure:
    """Each condition's rank with its marginal 95% bootstrap interval (thick) and, where
    ``ranks`` has them, its simultaneous 95% rank set (thin), best at the top (beyond
    ``analysis.paper.figures.FIGURE_ROWS`` conditions, the best and the worst)."""
    shown, note = first_and_last(ranks.sort_values("rank", kind="stable"))
    order = shown.iloc[::-1].reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7, 0.22 * len(order) + 1.5))
    if "rank_low_joint" in order:
        ax.hlines(
            order.index,
            order.rank_low_joint - 0.25,
            order.rank_high_joint + 0.25,
            color=PAIR[1],
            lw=1,
            label="simultaneous 95% rank set (all at once)",
        )
    ax.hlines(
        order.index, order.rank_low, order.rank_high, color=PAIR[1], lw=3, label="marginal 95%"
    )
    ax.plot(order["rank"], order.index, "o", color=PAIR[0], label="rank")
    ax.set_yticks(list(order.index), order.condition, fontsize=7)
    ax.set(xlabel="rank (bootstrap)", title=f"{title}\n{note}".strip())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # whole ranks
    # best at the right, half a rank beyond the extremes (one condition: rank 1 alone)
    widest = order.rank_high_joint if "rank_high_joint" in order else order.rank_high
    ax.set_xlim(max(widest.max(), order.rank_high.max(), order["rank"].max()) + 0.5, 0.5)
    tight_layout(fig)
    legend_below(ax, ncols=3)
    return fig
