"""How sure is each condition's rank? Section ``10-inference``'s rank uncertainty: the
columns its tables show, the numbers recorded from the published counts, and the figure of
each condition's rank with its intervals.
"""

from __future__ import annotations

from fractions import Fraction

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from analysis.paper.figures import PAIR, first_and_last, legend_below, tight_layout
from analysis.paper.presentation import reader_columns
from analysis.paper.provenance import numbers_table, slug, value_number


def ranks_columns(ranks: pd.DataFrame) -> list[str]:
    """Rank uncertainty's columns for a reader (the source, the empty cluster count and the
    numeric P(first), shown as ``p_first_shown`` with "< 1/B" for a bound, left out)."""
    return reader_columns(ranks, ["source", "n_clusters", "p_first"])


def published_ranks(conditions: pd.DataFrame) -> pd.DataFrame:
    """:func:`analysis.inference.rank_uncertainty_from_counts` on the published counts, each
    condition's bootstrap deviations inflated by the smallest design effect its counts allow
    (:func:`analysis.inference.design_bound.design_effect_bound`, null trials allowed): the
    least clustering the counts are consistent with, so the sets are at their narrowest."""
    from analysis.inference import rank_uncertainty_from_counts
    from analysis.inference.design_bound import NULLS_ALLOWED, design_effect_bound
    from analysis.scoring.ranking import trials_per_cell

    m = trials_per_cell(conditions)
    deff = design_effect_bound(conditions, m, NULLS_ALLOWED).design_effect_min if m else None
    return rank_uncertainty_from_counts(
        conditions,
        design_effect=None if deff is None else deff.to_numpy(dtype="float64"),
        design_effect_source="the smallest the published counts allow, null trials allowed",
    )


def published_rank_numbers(ranks: pd.DataFrame) -> pd.DataFrame:
    """P(first) and the 95% rank sets of each condition of :func:`published_ranks`; a
    P(first) no resample reached is recorded as its bound 1/B, flagged in the description
    and in its notes (``reads``)."""
    note = f"parametric bootstrap from published counts ({ranks.clustering.iloc[0]})"
    n_boot = inf_n_boot(ranks)
    rows = []
    for row in ranks.itertuples():
        base = f"inference.rank.{slug(row.condition)}"
        bound = pd.isna(row.p_first)
        rows += [
            value_number(
                f"{base}.p_first",
                Fraction(1, n_boot) if bound else float(row.p_first),
                (
                    f"upper bound on the probability of ranking first: no resample of {n_boot} "
                    f"ranked it first, {note}"
                    if bound
                    else f"probability of ranking first (ties shared), {note}"
                ),
                unit="probability",
                digits=len(str(n_boot)) + 1,  # 1/B and every share of it stay above 0
                notes={"reads": row.p_first_shown, "bound": "upper"} if bound else None,
            ),
        ]
        if pd.isna(row.rank_low):  # outside the leading conditions given rank sets
            continue
        rows += [
            value_number(
                f"{base}.rank_low",
                int(row.rank_low),
                f"marginal 95% rank set (this condition alone), lower end, {note}",
                unit="rank",
                digits=None,
            ),
            value_number(
                f"{base}.rank_high",
                int(row.rank_high),
                f"marginal 95% rank set (this condition alone), upper end, {note}",
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


def inf_n_boot(ranks: pd.DataFrame) -> int:
    """The resamples behind ``ranks`` (from ``p_first_shown``'s "< 1/B", else the default)."""
    from analysis.inference import N_BOOT

    shown = ranks.p_first_shown.astype(str)
    bound = shown[shown.str.startswith("< 1/")]
    return int(bound.iloc[0].removeprefix("< 1/")) if len(bound) else N_BOOT


def rank_figure(ranks: pd.DataFrame, title: str) -> plt.Figure:
    """Each condition's rank with its marginal 95% rank set (thick) and, where
    ``ranks`` has them, its simultaneous 95% rank set (thin), best at the top (beyond
    ``analysis.paper.figures.FIGURE_ROWS`` conditions, the best and the worst)."""
    with_sets = ranks[ranks["rank_low"].notna()]
    shown, note = first_and_last(with_sets.sort_values("rank", kind="stable"))
    if len(with_sets) < len(ranks):
        note = f"the leading {len(with_sets)} of {len(ranks)} conditions (with rank sets)"
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
        order.index,
        order.rank_low,
        order.rank_high,
        color=PAIR[1],
        lw=3,
        label="marginal 95% rank set",
    )
    ax.plot(order["rank"], order.index, "o", color=PAIR[0], label="rank")
    ax.set_yticks(list(order.index), order.condition, fontsize=7)
    ax.set(xlabel="rank (bootstrap)", title=f"{title}\n{note}".strip())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # whole ranks
    # best at the right, half a rank beyond the extremes (one condition: rank 1 alone), or
    # 2% of the span where that is more, so that a marker at rank 1 is drawn whole
    widest = order.rank_high_joint if "rank_high_joint" in order else order.rank_high
    last = max(widest.max(), order.rank_high.max(), order["rank"].max())
    pad = max(0.5, 0.02 * (last - 1))
    ax.set_xlim(last + pad, 1 - pad)
    # there is no rank 0 or below: where the padding shows one, rank 1 is labelled instead
    ticks = {max(t, 1.0) for t in ax.get_xticks() if 1 - pad <= t <= last + pad}
    ax.set_xticks(sorted(ticks))
    tight_layout(fig)
    legend_below(ax, ncols=3)
    return fig
