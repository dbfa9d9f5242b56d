"""Section ``02-leaderboard``: Table 2's numbers, its leaders, and its figure."""

from __future__ import annotations

from fractions import Fraction

import matplotlib.pyplot as plt
import pandas as pd

from analysis.figures import PAIR, PALETTE, first_and_last, legend_below, percent_axis
from analysis.leaderboard import read_names, trials_per_cell
from analysis.metrics import with_rates
from analysis.provenance import number_name, numbers_table, ratio_number, value_number

#: Each Table 2 rate recorded per condition: (name, numerator, denominator, description, in
#: which ``{modal}``, ``{pass}`` and ``{trials}`` are :func:`analysis.leaderboard.read_names`).
TABLE2_RATES = (
    ("mean_trial_accuracy", "n_trials_correct", "n_trials", "mean trial accuracy"),
    ("modal_accuracy", "n_modal_correct", "n_cells", "{modal} accuracy"),
    ("pass5", "n_pass5", "n_cells", "{pass}: cells correct on all {trials}"),
    ("under_refusal", "n_under_refusals", "n_hold_opportunities", "modal under-refusal"),
    ("over_refusal", "n_over_refusals", "n_proceed_opportunities", "modal over-refusal"),
)


def table2_numbers(ranked: pd.DataFrame) -> pd.DataFrame:
    """Every rate of Table 2 and the rank, per condition of
    :func:`analysis.leaderboard.rank_conditions`: ``table2.<condition>.<rate>``."""
    names = read_names(trials_per_cell(ranked))
    rows = []
    for row in ranked.to_dict("records"):
        label = row["label"]
        rows += [
            ratio_number(
                number_name("table2", label, name),
                row[k],
                row[n],
                f"{label}: {what.format(**names)}",
            )
            for name, k, n, what in TABLE2_RATES
        ]
        rows.append(
            value_number(
                number_name("table2", label, "rank"),
                int(row["rank"]),
                f"{label}: rank by mean trial accuracy, then {names['pass']}",
                unit="rank",
                digits=None,
            )
        )
    return numbers_table(rows)


def _modal_rate(row: pd.Series) -> Fraction:
    """A condition's modal accuracy as an exact fraction of its scored cells (-1 with none)."""
    n = int(row["n_cells"])
    return Fraction(int(row["n_modal_correct"]), n) if n else Fraction(-1)


def leader_numbers(ranked: pd.DataFrame, gates: pd.DataFrame) -> pd.DataFrame:
    """The leader by mean trial accuracy (Table 2's first row) and by modal accuracy (the
    rate over each condition's own scored cells; a tie goes to the earlier row of Table 2),
    the number of conditions, and how many beat both degenerate gates
    (:func:`analysis.metrics.degenerate_gates`) on modal accuracy."""
    names = read_names(trials_per_cell(ranked))
    leader = ranked.iloc[0]
    by_modal = ranked.iloc[max(range(len(ranked)), key=lambda i: _modal_rate(ranked.iloc[i]))]
    best_gate = max(_modal_rate(gate) for _, gate in gates.iterrows())
    beating = sum(_modal_rate(row) > best_gate for _, row in ranked.iterrows())
    return numbers_table(
        [
            value_number(
                "leaderboard.leader", leader.label, "first by mean trial accuracy", unit="condition"
            ),
            ratio_number(
                "leaderboard.leader.mean_trial_accuracy",
                leader.n_trials_correct,
                leader.n_trials,
                "the leader's mean trial accuracy",
            ),
            ratio_number(
                "leaderboard.leader.pass5",
                leader.n_pass5,
                leader.n_cells,
                f"the leader's {names['pass']}",
            ),
            value_number(
                "leaderboard.modal_leader",
                by_modal.label,
                f"first by {names['modal']} accuracy",
                unit="condition",
            ),
            ratio_number(
                "leaderboard.modal_leader.modal_accuracy",
                by_modal.n_modal_correct,
                by_modal.n_cells,
                f"the modal leader's {names['modal']} accuracy",
            ),
            value_number(
                "leaderboard.conditions",
                len(ranked),
                "published model conditions",
                unit="conditions",
                digits=None,
            ),
            value_number(
                "leaderboard.conditions_beating_both_gates",
                beating,
                "conditions whose modal accuracy beats always-hold and always-proceed",
                unit="conditions",
                digits=None,
            ),
        ]
    )


def table2_caption(ranked: pd.DataFrame) -> str:
    """Table 2's caption, naming its tie-break read by the trials per cell."""
    names = read_names(trials_per_cell(ranked))
    return (
        f"Model conditions ranked by mean trial accuracy, then {names['pass']} (the paper's "
        "Table 2)."
    )


def figure_caption(ranked: pd.DataFrame) -> str:
    """:func:`leaderboard_figure`'s caption, naming the reads by the trials per cell."""
    names = read_names(trials_per_cell(ranked))
    return (
        f"Mean trial accuracy (circles) and {names['pass']} (squares) per published "
        "condition, with Wilson 95% intervals; ranked as in Table 2."
    )


def leaderboard_figure(ranked: pd.DataFrame, gates: pd.DataFrame) -> plt.Figure:
    """Mean trial accuracy and pass5 per condition with Wilson 95% intervals, in Table 2's
    order, with the degenerate gates' modal accuracy as vertical lines (beyond
    ``analysis.figures.FIGURE_ROWS`` conditions, the first and the last)."""
    names = read_names(trials_per_cell(ranked))
    rated, shown = first_and_last(with_rates(ranked))
    fig, ax = plt.subplots(figsize=(6.4, 0.22 * len(rated) + 1.4))
    y = range(len(rated))[::-1]
    ax.errorbar(
        100 * rated.mean_trial_accuracy,
        [v + 0.17 for v in y],
        xerr=[
            100 * (rated.mean_trial_accuracy - rated.mean_trial_accuracy_low),
            100 * (rated.mean_trial_accuracy_high - rated.mean_trial_accuracy),
        ],
        fmt="o",
        color=PAIR[0],
        ms=4,
        capsize=2,
        label="mean trial accuracy (95% CI)",
    )
    ax.errorbar(
        100 * rated.pass5,
        [v - 0.17 for v in y],
        xerr=[100 * (rated.pass5 - rated.pass5_low), 100 * (rated.pass5_high - rated.pass5)],
        fmt="s",
        color=PAIR[1],
        mfc="white",
        ms=4,
        capsize=2,
        elinewidth=0.8,
        label=f"{names['pass']} (95% CI)",
    )
    for gate, style in zip(gates.itertuples(), (":", "--"), strict=True):
        ax.axvline(
            100 * gate.n_modal_correct / gate.n_cells,
            color=PALETTE["black"],
            ls=style,
            lw=1,
            label=f"{gate.condition} (degenerate gate)",
        )
    ax.set_yticks(list(y), rated.label, fontsize=7)
    ax.set_ylim(-0.8, len(rated) - 0.2)
    ax.set(xlabel=f"Share of trials (mean) or cells ({names['pass']})", title=shown)
    percent_axis(ax)
    legend_below(ax)
    return fig
