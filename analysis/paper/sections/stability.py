"""Section ``07-stability``: three reads of the same trials, their ranks, and trial splits."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.paper.figures import (
    FIGURE_ROWS,
    PALETTE,
    first_and_last,
    legend_below,
    percent_axis,
    row_label,
)
from analysis.paper.outputs import stand_in_title
from analysis.paper.provenance import number_name, numbers_table, ratio_number, value_number
from analysis.scoring.ranking import read_names, trials_per_cell
from analysis.scoring.reads import leaderboard_stability, split_distribution, stability

#: The three reads: (column, numerator, denominator, marker, colour, legend label).
READS = (
    ("mean_trial_accuracy", "n_trials_correct", "n_trials", "o", "blue", "mean trial accuracy"),
    ("modal_accuracy", "n_modal_correct", "n_cells", "s", "orange", "{modal} accuracy"),
    ("pass5", "n_pass5", "n_cells", "^", "green", "{pass}"),
)
#: Colours of the trial splits, in order.
#: The colour map of the trial splits, ordered from the most unanimous (dark) to the least:
#: monotonic in lightness, so the order reads in grayscale, and colour-blind safe.
SPLIT_COLOURMAP = "cividis"
RANK_COLUMNS = ["condition", "rank_mean_trial_accuracy", "rank_modal_accuracy", "rank_pass5"]


def stability_reads(conditions: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The three reads and their ranks: the published conditions from their counts
    (:func:`analysis.scoring.reads.leaderboard_stability`), every other pool from its cells."""
    per_trial = stability(cells)
    return pd.concat(
        [leaderboard_stability(conditions), per_trial[per_trial["source"] != "published"]],
        ignore_index=True,
    )


def stability_columns(reads: pd.DataFrame) -> list[str]:
    """:func:`stability_reads`'s columns for a reader (the pool and the flag left out; the
    CSV keeps them)."""
    return [c for c in reads.columns if c not in ("source", "modal_vs_pass5_differ")]


def stability_numbers(reads: pd.DataFrame) -> pd.DataFrame:
    """Each condition's three reads, and per pool the number of conditions whose modal and
    pass5 ranks differ."""
    rows, flips = [], []
    for source, part in reads.groupby(reads["source"].astype(str), sort=True):
        names = read_names(trials_per_cell(part))
        for row in part.to_dict("records"):
            rows += [
                ratio_number(
                    number_name("stability", row["condition"], read, source=source),
                    row[k],
                    row[n],
                    f"{row['condition']}: {label.format(**names)}",
                )
                for read, k, n, _, _, label in READS
            ]
        flips.append(
            value_number(
                number_name("stability", "modal_vs_pass5_rank_differ", source=source),
                int(part["modal_vs_pass5_differ"].sum()),
                f"conditions whose {names['modal']} and {names['pass']} ranks differ ({source})",
                unit="conditions",
                digits=None,
            )
        )
    return numbers_table(rows + flips)


def _of(reads: pd.DataFrame, source: str) -> pd.DataFrame:
    return reads.loc[reads["source"].astype(str) == source].reset_index(drop=True)


def rank_flips(reads: pd.DataFrame, source: str = "published") -> pd.DataFrame:
    """The conditions of ``source`` whose modal and pass5 ranks differ, with their ranks."""
    part = _of(reads, source)
    return part.loc[part["modal_vs_pass5_differ"], RANK_COLUMNS].reset_index(drop=True)


def _names(reads: pd.DataFrame, source: str) -> dict[str, str]:
    """What the reads of ``source`` are called at its trials per cell (``read_names``)."""
    return read_names(trials_per_cell(_of(reads, source)))


def reads_caption(reads: pd.DataFrame, source: str = "published") -> str:
    """The stability figure's caption, naming the reads by the trials per cell."""
    names = _names(reads, source)
    return (
        f"Mean trial accuracy, {names['modal']} accuracy and {names['pass']} of each {source} "
        "condition (from leaderboard.json), ranked by mean trial accuracy; the grey bar spans "
        "the three reads."
    )


def reads_table_caption(reads: pd.DataFrame, source: str = "published") -> str:
    """The caption of the table of :func:`stability_reads`, naming the reads by the trials
    per cell of ``source``."""
    names = _names(reads, source)
    return (
        f"Mean trial accuracy, {names['modal']} accuracy and {names['pass']} per condition "
        "with their ranks; published conditions from leaderboard.json, other rows from "
        "reference policies and the sample cell."
    )


def rank_flip_text(reads: pd.DataFrame, source: str = "published") -> str:
    """One sentence: how many conditions of ``source`` rank differently by modal accuracy
    and by the all-trials read (pass5 at five trials per cell)."""
    part, names = _of(reads, source), _names(reads, source)
    flips = int(part["modal_vs_pass5_differ"].sum())
    return (
        f"{flips} of {len(part)} {source} conditions rank differently by {names['modal']} "
        f"accuracy and by {names['pass']}."
    )


def stability_figure(reads: pd.DataFrame, source: str = "published") -> plt.Figure:
    """The three reads of each condition of ``source`` on one row, ranked by mean trial
    accuracy, joined by a grey bar spanning them."""
    ranked = _of(reads, source).sort_values("rank_mean_trial_accuracy", kind="stable")
    names = read_names(trials_per_cell(ranked))
    reads, shown = first_and_last(ranked)
    fig, ax = plt.subplots(figsize=(6.4, 0.24 * len(reads) + 1.4))
    y = list(range(len(reads)))
    values = 100 * reads[[column for column, *_ in READS]].astype(float)
    ax.hlines(y, values.min(axis=1), values.max(axis=1), color="0.75", lw=1.2, zorder=1)
    for (column, _, _, marker, colour, label), shift in zip(READS, (-0.2, 0.0, 0.2), strict=True):
        ax.scatter(
            values[column],
            [v + shift for v in y],
            marker=marker,
            s=22,
            color=PALETTE[colour],
            label=label.format(**names),
            zorder=3,
        )
    ax.set_yticks(y, reads["condition"], fontsize=7)
    ax.invert_yaxis()
    percent_axis(ax)
    ax.set(
        xlabel=f"Share of trials (mean) or cells (modal, {names['pass']})",
        title=f"Three reads of the same {names['trials']}, {source} conditions\n{shown}".strip(),
    )
    legend_below(ax, ncols=3)  # under the axes: no condition's marker hides behind it
    return fig


def split_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Cells per trial split (:func:`analysis.scoring.reads.split_label`) per pool and
    condition, one column per split, most unanimous first."""
    splits = split_distribution(cells)
    wide = splits.pivot_table(
        index=["source", "condition"],
        columns="split",
        values="n_cells",
        aggfunc="sum",
        fill_value=0,
    )
    order = splits.sort_values(["modal_count", "split"], ascending=[False, True])["split"]
    wide = wide[list(dict.fromkeys(order))]
    wide.columns.name = None
    return wide.reset_index()


def unanimous_numbers(cells: pd.DataFrame) -> pd.DataFrame:
    """Per pool and condition, the cells whose every trial gave the modal decision (a 5-0
    split at five trials) among the cells with a modal decision."""
    scored = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    counts = (
        scored.assign(
            source=scored["source"].astype(str),
            condition=scored["condition"].astype(str),
            same_decision=scored["same_decision"].astype(bool),
        )
        .groupby(["source", "condition"], sort=True)["same_decision"]
        .agg(["sum", "size"])
    )
    return numbers_table(
        ratio_number(
            number_name("stability", condition, "unanimous_cells", source=source),
            row["sum"],
            row["size"],
            f"{condition}: cells whose every trial gave the modal decision",
        )
        for (source, condition), row in counts.iterrows()
    )


def split_figure(table: pd.DataFrame, sources: list[str]) -> plt.Figure:
    """Each condition's share of cells per trial split (:func:`split_table`), stacked; beyond
    ``analysis.paper.figures.FIGURE_ROWS`` conditions, those with the most and the fewest cells of
    the most unanimous split."""
    wide = table.set_index(["source", "condition"])
    shares = 100 * wide.div(wide.sum(axis=1), axis=0)
    if len(shares) > FIGURE_ROWS:
        shares = shares.sort_values(shares.columns[0], ascending=False, kind="stable")
    shares, shown = first_and_last(shares)
    fig, ax = plt.subplots(figsize=(6.4, 0.32 * len(shares) + 1.6))
    left = pd.Series(0.0, index=shares.index)
    colours = plt.get_cmap(SPLIT_COLOURMAP)(np.linspace(0.0, 0.92, len(shares.columns)))
    for split, colour in zip(shares.columns, colours, strict=True):
        ax.barh(
            range(len(shares)),
            shares[split],
            left=left,
            label=split,
            color=colour,
            edgecolor="white",
        )
        left += shares[split]
    ax.set_yticks(range(len(shares)), [row_label(c, s) for s, c in shares.index], fontsize=7)
    ax.invert_yaxis()
    percent_axis(ax, limits=False)
    ax.set_xlim(0, 100)
    title = stand_in_title("Trial splits per condition", sources)
    ax.set(xlabel="Share of cells", title=f"{title}\n{shown}".strip())
    legend_below(ax, title="Trial split (modal - other, + none)", ncols=min(6, len(shares.columns)))
    return fig
