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

#: Table 2's Wilson column on trials, and the least-clustering band beside it (a floor on
#: the width of a clustered 95% interval, not a 95% interval).
INDEPENDENT_CI = "95% CI (trials independent)"
CLUSTERED_BAND = "least-clustering band (not a CI)"
DEFF_MIN = "design effect, at least"
#: What the band is and what it claims, said wherever it is shown.
BOUND_NOTE = (
    "Wilson's interval of mean trial accuracy at n / DEFF trials, DEFF the smallest design "
    "effect of any spread of correct trials over cells consistent with the correct trials, "
    "{pass} cells, {modal}-correct cells and cells without a decision, under upstream's modal "
    "rule with null trials allowed anywhere it allows them. It is not a 95% interval (where "
    "trials cluster it covers the true accuracy less often): it is a floor on the width of "
    "one. A scenario-clustered 95% interval from the per-trial verdicts (Clopper-Pearson at "
    "the Korn-Graubard effective size, which the release's counts do not allow) is at least "
    "this wide in every simulated release of the package's calibration, and so is the "
    "Wilson interval at the cells' own design effect (floored at 1); a scenario bootstrap "
    "can be narrower"
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
        "Table 2). Each 95% CI of the release is Wilson's, treating trials (or cells) as "
        "independent."
    )


def figure_caption(ranked: pd.DataFrame) -> str:
    """:func:`leaderboard_figure`'s caption, naming the reads by the trials per cell."""
    names = read_names(trials_per_cell(ranked))
    return (
        f"Mean trial accuracy (circles) and {names['pass']} (squares) per published "
        "condition, with Wilson 95% intervals treating trials (or cells) as independent, and "
        "behind each mean trial accuracy its least-clustering band (not a 95% interval): "
        + BOUND_NOTE.format(**names)
        + "; ranked as in Table 2."
    )


def leaderboard_figure(
    ranked: pd.DataFrame, gates: pd.DataFrame, bounds: pd.DataFrame | None = None
) -> plt.Figure:
    """Mean trial accuracy and pass5 per condition with Wilson 95% intervals, in Table 2's
    order, with the degenerate gates' modal accuracy as vertical lines (beyond
    ``analysis.paper.figures.FIGURE_ROWS`` conditions, the first and the last); with ``bounds``
    (:func:`clustered_bounds`), each mean trial accuracy's least-clustering band (Wilson at
    its smallest design effect: a floor on a clustered 95% interval's width, not an interval)
    as a light band behind its Wilson interval on trials."""
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
            label="mean trial accuracy, least-clustering band (not a CI: a floor on a "
            "clustered 95% CI's width)",
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
    """Per condition of Table 2, in its order: the smallest design effect its counts allow
    and the least-clustering band at it (:func:`analysis.inference.design_bound.
    design_effect_bound`, null trials allowed; a floor on a clustered 95% interval's width),
    with ``rank`` and the smaller design effect's companion under no null trials
    (``design_effect_min_no_nulls``)."""
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
    independent and the least-clustering band beside it (blank where none)."""

    def text(low: float, high: float) -> str:
        if pd.isna(low) or pd.isna(high):
            return ""
        return f"[{interval_bound_text(low)}, {interval_bound_text(high)}]"

    out = table.rename(columns={"95% CI": INDEPENDENT_CI})
    at = out.columns.get_loc(INDEPENDENT_CI) + 1
    if bounds.empty:
        bounds = pd.DataFrame(index=table.index, columns=["ci_low", "ci_high", "design_effect_min"])
    pairs = zip(bounds.ci_low, bounds.ci_high, strict=True)
    out.insert(at, CLUSTERED_BAND, [text(a, b) for a, b in pairs])
    deff = ["" if pd.isna(d) else f"{d:.2f}" for d in bounds.design_effect_min]
    out.insert(at + 1, DEFF_MIN, deff)
    return out


def bound_caption(ranked: pd.DataFrame) -> str:
    """What Table 2's band column is, by the release's reads."""
    names = read_names(trials_per_cell(ranked))
    return f"{CLUSTERED_BAND[0].upper()}{CLUSTERED_BAND[1:]}: " + BOUND_NOTE.format(**names) + "."


def separation_tests(bounds: pd.DataFrame) -> pd.DataFrame:
    """Which conditions of Table 2 a test separates at the least clustering the counts allow:
    the Miettinen-Nurminen score test (:func:`analysis.inference.two_proportions.
    score_difference`) on each condition's trials counted as n / DEFF (``n_effective``, DEFF
    its smallest design effect), for the leader against every other condition (``family``
    ``leader``) and for each pair of adjacent ranks (``adjacent``), Holm within each family.
    More clustering only shrinks n / DEFF and raises p, so a pair not separated here cannot be
    told apart under any clustering the counts allow; a separated pair may not stay so.
    Holm by :func:`analysis.inference.adjust_pvalues`, as every other family (not
    statsmodels' ``multipletests``, whose Holm runs a full garbage collection at every
    call)."""
    from analysis.inference import adjust_pvalues
    from analysis.inference.two_proportions import score_test

    rows = bounds.dropna(subset=["n_effective"]).sort_values("rank").reset_index(drop=True)
    columns = ["family", "first", "second", "rank_first", "rank_second", "p"]
    if len(rows) < 2:
        return pd.DataFrame(columns=[*columns, "p_holm", "separated"])
    n, k = rows.n_effective.to_numpy(), (rows.estimate * rows.n_effective).to_numpy()
    tests = []
    for family, pairs in (
        ("leader", [(0, j) for j in range(1, len(rows))]),
        ("adjacent", [(i, i + 1) for i in range(len(rows) - 1)]),
    ):
        a, b = (list(x) for x in zip(*pairs, strict=True))
        p = score_test(k[a], n[a], k[b], n[b])
        tests += [
            dict(zip(columns, row, strict=True))
            for row in zip(
                [family] * len(a),
                rows.condition[a],
                rows.condition[b],
                rows["rank"][a],
                rows["rank"][b],
                p,
                strict=True,
            )
        ]
    out = adjust_pvalues(pd.DataFrame(tests), family="family")[[*columns, "p_holm"]]
    return out.assign(separated=out.p_holm < 0.05)


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
    """Which leading and adjacent ranks a test cannot separate even at the least clustering
    the counts allow (:func:`separation_tests`; the shorter list of adjacent pairs named: the
    unseparated ones, or the separated ones when most are not)."""
    if bounds.empty or bounds.ci_low.isna().all():
        return "No condition has a clustered bound: Table 2's ranks stand on the Wilson column."
    tests = separation_tests(bounds)
    leader = bounds.sort_values("rank").condition.iloc[0]
    with_leader = tests.loc[tests.family == "leader"]
    adjacent = tests.loc[tests.family == "adjacent"]
    kept = with_leader.loc[~with_leader.separated, "rank_second"].astype(int).tolist()
    apart = with_leader.loc[with_leader.separated, "rank_second"].astype(int).tolist()
    open_pairs = adjacent.loc[~adjacent.separated]
    if len(open_pairs) * 2 > len(adjacent):
        ordered = adjacent.loc[adjacent.separated]
        named = "separated: " + (
            ", ".join(f"{r.rank_first} / {r.rank_second}" for r in ordered.itertuples()) or "none"
        )
    else:
        named = "not separated: " + (
            ", ".join(f"{r.rank_first} / {r.rank_second}" for r in open_pairs.itertuples())
            or "none"
        )
    return (
        "Tested at the least clustering the counts allow (each condition's trials counted as "
        "n / DEFF, DEFF its smallest design effect; a two-proportion score test, Holm over the "
        f"{len(with_leader)} comparisons with the leader), ranks "
        f"{_rank_ranges(kept) or 'none'} ({len(kept)} of {len(with_leader)} conditions) are not "
        f"separated from {leader}: they cannot be told apart from it on Table 2's counts, as "
        "more clustering only raises p. Ranks "
        f"{_rank_ranges(apart) or 'none'} are separated at that least clustering, which more "
        f"clustering could undo. Of the {len(adjacent)} pairs of adjacent ranks (Holm over "
        f"them), {len(open_pairs)} are not separated and cannot be ordered ({named}). The counts "
        "do not carry the pairing by scenario: a paired test on per-scenario verdicts could "
        "separate more."
    )


def bound_numbers(bounds: pd.DataFrame, ranked: pd.DataFrame) -> pd.DataFrame:
    """``table2.<condition>.mean_trial_accuracy_clustered_low`` / ``_high`` beside
    ``mean_trial_accuracy_wilson_low`` / ``_high`` (trials independent) and
    ``.design_effect_min`` (and ``_no_nulls``) per condition, and how many conditions and
    adjacent pairs :func:`separation_tests` does not separate."""
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
                f"{what}, least-clustering band, lower end (not a 95% bound): {note}",
                unit="%",
            ),
            value_number(
                number_name("table2", row.condition, "mean_trial_accuracy_clustered_high"),
                100 * row.ci_high,
                f"{what}, least-clustering band, upper end (not a 95% bound): {note}",
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
    tests = separation_tests(bounds) if len(bounds) else pd.DataFrame()
    if len(tests):
        least = "at the least clustering the counts allow (score test at n / DEFF, Holm)"
        rows += [
            value_number(
                "leaderboard.separation.not_separated_from_leader",
                int((~tests.separated[tests.family == "leader"]).sum()),
                f"conditions a test does not separate from the leader {least}",
                unit="conditions",
                digits=None,
            ),
            value_number(
                "leaderboard.separation.adjacent_not_separated",
                int((~tests.separated[tests.family == "adjacent"]).sum()),
                f"adjacent ranks of Table 2 a test does not separate {least}",
                unit="pairs",
                digits=None,
            ),
        ]
    return numbers_table(rows)
