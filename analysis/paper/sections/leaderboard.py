"""Section ``02-leaderboard``: Table 2's numbers, its leaders, and its figure."""

from __future__ import annotations

from fractions import Fraction

import matplotlib.pyplot as plt
import pandas as pd

from analysis.corpus.formatting import interval_bound_text, weighted_miss_text
from analysis.inference.design_bound import NO_NULLS, NULLS_ALLOWED, design_effect_bound
from analysis.paper.figures import PAIR, PALETTE, first_and_last, legend_below, percent_axis
from analysis.paper.provenance import number_name, numbers_table, ratio_number, value_number
from analysis.scoring.leaderboard import UNDETERMINED
from analysis.scoring.metrics import with_rates
from analysis.scoring.ranking import read_names, trials_per_cell

#: Table 2's Wilson column on trials, and the clustered bound beside it.
INDEPENDENT_CI = "95% CI (trials independent)"
CLUSTERED_CI = "clustered 95% CI, at least"
DEFF_MIN = "design effect, at least"
#: What the clustered bound assumes, said wherever it is shown.
BOUND_NOTE = (
    "the narrowest scenario-clustered interval of mean trial accuracy the published counts "
    "allow: the Wilson interval at n / DEFF, DEFF the smallest design effect of any "
    "spread of correct trials over cells consistent with the correct trials, {pass} "
    "cells, {modal}-correct cells and cells without a decision, under upstream's modal rule "
    "with null trials allowed anywhere it allows them (the true interval is at least this wide)"
)

#: Each Table 2 rate recorded per condition: (name, numerator, denominator, description, in
#: which ``{modal}``, ``{pass}`` and ``{trials}`` are
#: :func:`analysis.scoring.ranking.read_names`).
TABLE2_RATES = (
    ("mean_trial_accuracy", "n_trials_correct", "n_trials", "mean trial accuracy"),
    ("modal_accuracy", "n_modal_correct", "n_cells", "{modal} accuracy"),
    ("pass5", "n_pass5", "n_cells", "{pass}: cells correct on all {trials}"),
    ("under_refusal", "n_under_refusals", "n_hold_opportunities", "modal under-refusal"),
    ("over_refusal", "n_over_refusals", "n_proceed_opportunities", "modal over-refusal"),
)


#: The ledger's section for Table 2's numbers that the release prints per condition.
TABLE2_SECTION = "Table 2"


def weighted_miss_number(row: dict) -> dict:
    """``table2.<condition>.weighted_miss``: the modal-missed tier weight over the tier
    weight of the cells with a modal decision, with its counts and where they come from
    (``counts_from``: the leaderboard, or the per-trial verdicts where its string fits several
    counts); where nothing settles the count, the printed value and every fitting count. The
    notes carry the leaderboard's string (``published``) for the claims ledger."""
    label, source = row["label"], str(row["weighted_miss_from"])
    name = number_name("table2", label, "weighted_miss")
    notes = {
        "section": TABLE2_SECTION,
        "published": weighted_miss_text(*row["weighted_miss_fit"]),
        "counts_from": source,
    }
    what = (
        "weighted miss (modal-missed tier weight / tier weight of the cells with a modal decision)"
    )
    if source == UNDETERMINED:
        notes |= {"statement": f"{label} weighted miss counts", "fits": row["weighted_miss_counts"]}
        return value_number(
            name,
            Fraction(notes["published"].removesuffix("%")),
            f"{label}: {what} as the leaderboard prints it; the counts "
            f"{row['weighted_miss_counts']} each print so, and no per-trial verdicts say which",
            unit="%",
            notes=notes,
        )
    notes["statement"] = f"{label} weighted miss (counts from the {source})"
    return ratio_number(
        name,
        row["weight_missed"],
        row["weight_scored"],
        f"{label}: {what}, rounded to 4 decimals as a rate; counts from the {source}",
        notes=notes,
        printed=Fraction(weighted_miss_text(row["weight_missed"], row["weight_scored"])[:-1]),
    )


def table2_numbers(ranked: pd.DataFrame) -> pd.DataFrame:
    """Every rate of Table 2 and the rank, per condition of
    :func:`analysis.scoring.ranking.rank_conditions`: ``table2.<condition>.<rate>``, weighted
    miss (:func:`weighted_miss_number`) among them."""
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
        rows.append(weighted_miss_number(row))
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
    (:func:`analysis.scoring.metrics.degenerate_gates`) on modal accuracy."""
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
        "condition, with Wilson 95% intervals treating trials (or cells) as independent, and "
        "behind each mean trial accuracy the light band of its clustered bound: "
        + BOUND_NOTE.format(**names)
        + "; ranked as in Table 2."
    )


def leaderboard_figure(
    ranked: pd.DataFrame, gates: pd.DataFrame, bounds: pd.DataFrame | None = None
) -> plt.Figure:
    """Mean trial accuracy and pass5 per condition with Wilson 95% intervals, in Table 2's
    order, with the degenerate gates' modal accuracy as vertical lines (beyond
    ``analysis.paper.figures.FIGURE_ROWS`` conditions, the first and the last); with ``bounds``
    (:func:`clustered_bounds`), each mean trial accuracy's narrowest clustered interval as a
    light band behind its Wilson interval."""
    names = read_names(trials_per_cell(ranked))
    rated, shown = first_and_last(with_rates(ranked))
    fig, ax = plt.subplots(figsize=(6.4, 0.22 * len(rated) + 1.4))
    y = range(len(rated))[::-1]
    if bounds is not None and not bounds.empty:
        band = rated[["label"]].merge(
            bounds.rename(columns={"condition": "label"}), on="label", how="left"
        )
        ax.hlines(
            [v + 0.17 for v in y],
            100 * band.ci_low,
            100 * band.ci_high,
            color=PAIR[0],
            alpha=0.3,
            lw=5,
            label="mean trial accuracy, clustered 95% CI (at least this wide)",
        )
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
        label="mean trial accuracy (95% CI, trials independent)",
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
        label=f"{names['pass']} (95% CI, cells independent)",
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


def clustered_bounds(ranked: pd.DataFrame) -> pd.DataFrame:
    """Per condition of Table 2, in its order: the smallest design effect and narrowest
    clustered interval its counts allow (:func:`analysis.inference.design_bound.
    design_effect_bound`, null trials allowed), with ``rank`` and the smaller bound's
    companion under no null trials (``design_effect_min_no_nulls``)."""
    m = trials_per_cell(ranked)
    bound = design_effect_bound(ranked, m, NULLS_ALLOWED) if m else pd.DataFrame()
    if bound.empty:
        return bound
    strict = design_effect_bound(ranked, m, NO_NULLS)
    return bound.assign(
        rank=ranked["rank"].to_numpy(), design_effect_min_no_nulls=strict.design_effect_min
    )


def with_clustered_columns(table: pd.DataFrame, bounds: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as printed with its mean-trial Wilson column labelled as treating trials as
    independent and the clustered bound beside it (blank where no bound)."""

    def text(low: float, high: float) -> str:
        if pd.isna(low) or pd.isna(high):
            return ""
        return f"[{interval_bound_text(low)}, {interval_bound_text(high)}]"

    out = table.rename(columns={"95% CI": INDEPENDENT_CI})
    at = out.columns.get_loc(INDEPENDENT_CI) + 1
    if bounds.empty:
        bounds = pd.DataFrame(index=table.index, columns=["ci_low", "ci_high", "design_effect_min"])
    pairs = zip(bounds.ci_low, bounds.ci_high, strict=True)
    out.insert(at, CLUSTERED_CI, [text(a, b) for a, b in pairs])
    deff = ["" if pd.isna(d) else f"{d:.2f}" for d in bounds.design_effect_min]
    out.insert(at + 1, DEFF_MIN, deff)
    return out


def bound_caption(ranked: pd.DataFrame) -> str:
    """What Table 2's clustered column is, by the release's reads."""
    names = read_names(trials_per_cell(ranked))
    return "Clustered 95% CI: " + BOUND_NOTE.format(**names) + "."


def overlapping_neighbours(bounds: pd.DataFrame) -> list[tuple[str, str]]:
    """Adjacent conditions of Table 2 (rank r and r + 1) whose clustered bounds overlap."""
    rows = bounds.sort_values("rank").reset_index(drop=True)
    return [
        (rows.condition[i], rows.condition[i + 1])
        for i in range(len(rows) - 1)
        if rows.ci_low[i] <= rows.ci_high[i + 1] and rows.ci_low[i + 1] <= rows.ci_high[i]
    ]


def overlapping_leader(bounds: pd.DataFrame) -> list[str]:
    """The conditions after the leader whose clustered bound overlaps the leader's."""
    rows = bounds.sort_values("rank").reset_index(drop=True)
    if rows.empty or pd.isna(rows.ci_low[0]):
        return []
    low, high = rows.ci_low[0], rows.ci_high[0]
    return [
        r.condition
        for r in rows.iloc[1:].itertuples()
        if pd.notna(r.ci_low) and r.ci_low <= high and low <= r.ci_high
    ]


def _rank_ranges(ranks: list[int]) -> str:
    """Whole ranks as ranges: ``[2, 3, 4, 7]`` -> ``"2-4, 7"``."""
    parts, ranks = [], sorted(ranks)
    for rank in ranks:
        if parts and rank == parts[-1][1] + 1:
            parts[-1][1] = rank
        else:
            parts.append([rank, rank])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


def separation_text(bounds: pd.DataFrame) -> str:
    """Which leading and adjacent ranks the clustered bounds cannot separate (the shorter
    list named: the overlapping pairs, or the separated ones when most overlap)."""
    if bounds.empty or bounds.ci_low.isna().all():
        return "No condition has a clustered bound: Table 2's ranks stand on the Wilson column."
    rank_of = dict(zip(bounds.condition, bounds["rank"], strict=True))
    leader = bounds.sort_values("rank").condition.iloc[0]
    with_leader = [rank_of[c] for c in overlapping_leader(bounds)]
    overlapping = overlapping_neighbours(bounds)
    pairs = len(bounds) - 1
    if len(overlapping) * 2 > pairs:
        kept = {rank_of[a] for a, _ in overlapping}
        separated = [r for r in range(1, pairs + 1) if r not in kept]
        named = "separated: " + (
            ", ".join(f"{r} / {r + 1}" for r in separated) if separated else "none"
        )
    else:
        named = "overlapping: " + (
            ", ".join(f"{rank_of[a]} / {rank_of[b]}" for a, b in overlapping) or "none"
        )
    return (
        f"The leader's clustered interval, at its narrowest, overlaps those of ranks "
        f"{_rank_ranges(with_leader) or 'none'} ({len(with_leader)} of {pairs} conditions), "
        f"so none of them can be told apart from {leader} on Table 2's counts. Of the {pairs} "
        f"pairs of adjacent ranks, {len(overlapping)} have overlapping intervals and cannot be "
        f"ordered ({named}). Overlap is read from the narrowest intervals the counts allow; "
        "ordering two conditions needs their paired per-scenario verdicts."
    )


def bound_numbers(bounds: pd.DataFrame, ranked: pd.DataFrame) -> pd.DataFrame:
    """``table2.<condition>.mean_trial_accuracy_clustered_low`` / ``_high`` beside
    ``mean_trial_accuracy_wilson_low`` / ``_high`` (trials independent) and
    ``.design_effect_min`` (and ``_no_nulls``) per condition, and how many conditions overlap
    the leader and how many adjacent pairs overlap."""
    names = read_names(trials_per_cell(ranked))
    note = BOUND_NOTE.format(**names)
    rows = []
    for row in bounds.itertuples():
        if pd.isna(row.ci_low):
            continue
        what = f"{row.condition}: mean trial accuracy"
        independent = "Wilson 95% {end} bound treating trials as independent (the release's)"
        rows += [
            value_number(
                number_name("table2", row.condition, "mean_trial_accuracy_wilson_low"),
                100 * row.wilson_low,
                f"{what}, {independent.format(end='lower')}",
                unit="%",
            ),
            value_number(
                number_name("table2", row.condition, "mean_trial_accuracy_wilson_high"),
                100 * row.wilson_high,
                f"{what}, {independent.format(end='upper')}",
                unit="%",
            ),
            value_number(
                number_name("table2", row.condition, "mean_trial_accuracy_clustered_low"),
                100 * row.ci_low,
                f"{what}, clustered 95% lower bound: {note}",
                unit="%",
            ),
            value_number(
                number_name("table2", row.condition, "mean_trial_accuracy_clustered_high"),
                100 * row.ci_high,
                f"{what}, clustered 95% upper bound: {note}",
                unit="%",
            ),
            value_number(
                number_name("table2", row.condition, "design_effect_min"),
                float(row.design_effect_min),
                f"{what}: smallest design effect its counts allow (null trials allowed)",
                unit="ratio",
                digits=2,
            ),
            value_number(
                number_name("table2", row.condition, "design_effect_min_no_nulls"),
                float(row.design_effect_min_no_nulls),
                f"{what}: smallest design effect its counts allow if no cell with a modal "
                "decision has a null trial",
                unit="ratio",
                digits=2,
            ),
        ]
    if len(bounds) and bounds.ci_low.notna().any():
        rows += [
            value_number(
                "leaderboard.clustered.overlapping_leader",
                len(overlapping_leader(bounds)),
                "conditions whose narrowest clustered interval overlaps the leader's",
                unit="conditions",
                digits=None,
            ),
            value_number(
                "leaderboard.clustered.overlapping_adjacent",
                len(overlapping_neighbours(bounds)),
                "adjacent ranks of Table 2 whose narrowest clustered intervals overlap",
                unit="pairs",
                digits=None,
            ),
        ]
    return numbers_table(rows)
