"""Section ``10-inference``: every inference method, on the published counts, on each source
of per-trial verdicts present, and on a simulated release-sized input.

The per-source parts write one set of tables and figures per source (their number depends
on the verdicts found), so the functions here show and write through the section.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from analysis import inference as inf
from analysis.corpus.formatting import exact_fraction
from analysis.paper.figures import PAIR, first_and_last, legend_below, percent_axis, tight_layout
from analysis.paper.provenance import numbers_table, slug, value_number
from analysis.scoring.breakdowns import POOL_OF
from analysis.scoring.ranking import read_names

if TYPE_CHECKING:
    from analysis.paper.sections.opening import Section

#: Where each source's numbers live (the simulated input records none).
NAMESPACE = {
    "published": "inference",
    "reference-policy": "reference.inference",
    "run": "runs.inference",
}
#: Columns of the unpaired table a reader does not need (constant or empty there).
UNPAIRED_HIDDEN = [
    "source",
    "model",
    "n_clusters",
    "n_unpaired",
    "caveat",
    "sd_diff",
    "discordance",
    "note",
]
#: Columns of the pooled table a reader does not need (every interval's method and note are
#: shown: a fallback or a refusal is named in its row).
POOLED_HIDDEN: list[str] = []
PAIRED_SHOWN = [
    "contrast",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "p",
    "p_holm",
    "p_bh",
    "survives_holm",
    "survives_bh",
    "n_clusters",
    "pairing",
    "note",
]
MARKERS = "os^vDP*xh+"
#: Conditions a pass^k figure draws, each named in its legend; beyond this many, the half
#: with the highest pass^k at the largest k and the half with the lowest.
PASS_K_LINES = 12


def points(value: float) -> Fraction:
    """A fraction (a double) as exact percentage points: 100 x the fraction of counts it was
    computed as (:func:`analysis.corpus.formatting.exact_fraction`), so that 51/80 is 63.75."""
    return 100 * exact_fraction(value)


def unpaired_contrasts(conditions: pd.DataFrame) -> pd.DataFrame:
    """Reasoning high minus floor from the published counts
    (:func:`analysis.inference.unpaired_reasoning`), adjusted within each metric, with the
    smallest correlation across settings its Holm step needs
    (:func:`analysis.inference.pairing_bound.correlation_needed`, ``rho_needed_holm``)."""
    from analysis.inference.pairing_bound import correlation_needed
    from analysis.scoring.ranking import trials_per_cell

    adjusted = inf.adjust_pvalues(
        inf.unpaired_reasoning(conditions), family="metric", named="reasoning-published"
    )
    m = trials_per_cell(conditions)
    needed = correlation_needed(adjusted, conditions, m) if m and len(adjusted) else np.nan
    return adjusted.assign(rho_needed_holm=needed)


def reader_columns(frame: pd.DataFrame, hidden: list[str]) -> list[str]:
    """The columns of ``frame`` a reader's table shows: all but ``hidden`` (the CSV keeps
    them all)."""
    return [c for c in frame.columns if c not in hidden]


def unpaired_columns(unpaired: pd.DataFrame) -> list[str]:
    """:func:`unpaired_contrasts`'s columns for a reader (constant and empty ones left out)."""
    return reader_columns(unpaired, UNPAIRED_HIDDEN)


def ranks_columns(ranks: pd.DataFrame) -> list[str]:
    """Rank uncertainty's columns for a reader (the source and the empty cluster count left
    out)."""
    return reader_columns(ranks, ["source", "n_clusters"])


def pairing_caveat(rho: float) -> str:
    """What a Holm survivor's claim adds about the pairing it needs
    (:func:`analysis.inference.pairing_bound.correlation_needed`); empty without a value."""
    if pd.isna(rho):
        return ""
    if rho <= -1:
        return "; a paired test over scenarios clears its Holm step whatever the correlation"
    if rho > 1:
        return "; a paired test over scenarios clears its Holm step at no correlation"
    return (
        "; a paired test over scenarios clears its Holm step only if the per-scenario "
        f"outcomes correlate at least {rho:.2f} across settings (at the least clustering the "
        "counts allow)"
    )


def unpaired_numbers(unpaired: pd.DataFrame) -> pd.DataFrame:
    """Per model and metric of :func:`analysis.inference.unpaired_reasoning` (after
    :func:`~analysis.inference.adjust_pvalues`): the difference and its 95% bounds in points;
    then how many contrasts were tested, how many intervals exclude zero, and how many
    survive Holm and Benjamini-Hochberg within their metric."""
    note = "high minus floor, published counts, unpaired (ignores pairing and clustering)"
    rows = []
    for row in unpaired.itertuples():
        base = f"inference.reasoning.{slug(row.model)}.{row.metric}"
        survives = [
            name
            for name, kept in (("Holm", row.survives_holm), ("Benjamini-Hochberg", row.survives_bh))
            if kept
        ]
        claim = note
        if survives and "family_name" in unpaired.columns:
            claim += (
                f"; significant after {' and '.join(survives)} in the family "
                f"'{row.family_name}', with its caveat: {row.caveat}"
            )
            claim += pairing_caveat(getattr(row, "rho_needed_holm", np.nan))
        rows += [
            value_number(f"{base}.unpaired_diff", points(row.estimate), claim, unit="points"),
            value_number(
                f"{base}.unpaired_ci_low",
                points(row.ci_low),
                f"95% lower bound, {note}",
                unit="points",
            ),
            value_number(
                f"{base}.unpaired_ci_high",
                points(row.ci_high),
                f"95% upper bound, {note}",
                unit="points",
            ),
        ]
    family = unpaired.dropna(subset=["p"])
    excluding = int(((family.ci_low > 0) | (family.ci_high < 0)).sum())
    published = inf.FAMILIES["reasoning-published"]
    name, caveat = published.name, published.caveat
    rows += [
        value_number(
            "inference.reasoning.unpaired.n_tests",
            len(family),
            "reasoning contrasts tested from published counts (both metrics)",
            unit="tests",
            digits=None,
        ),
        value_number(
            "inference.reasoning.unpaired.n_excluding_zero",
            excluding,
            "unpaired 95% intervals excluding zero, unadjusted",
            unit="intervals",
            digits=None,
        ),
        value_number(
            "inference.reasoning.unpaired.n_survive_holm",
            int(family.survives_holm.sum()),
            f"contrasts significant after Holm within their metric (family: {name}); {caveat}",
            unit="contrasts",
            digits=None,
        ),
        value_number(
            "inference.reasoning.unpaired.n_survive_bh",
            int(family.survives_bh.sum()),
            "contrasts significant after Benjamini-Hochberg within their metric (family: "
            f"{name}); {caveat}",
            unit="contrasts",
            digits=None,
        ),
    ]
    return numbers_table(rows)


def unpaired_summary(unpaired: pd.DataFrame) -> str:
    """How many unadjusted intervals exclude zero against how many would by chance, and how
    many contrasts survive each adjustment."""
    family = unpaired.dropna(subset=["p"])
    excluding = int(((family.ci_low > 0) | (family.ci_high < 0)).sum())
    published = inf.FAMILIES["reasoning-published"]
    needs = ""
    if "rho_needed_holm" in family.columns:
        survivors = family.loc[family.survives_holm.astype(bool)]
        needs = "".join(
            f" For {r.contrast} ({r.metric}), "
            + pairing_caveat(r.rho_needed_holm).removeprefix("; ")
            + "."
            for r in survivors.itertuples()
            if pd.notna(r.rho_needed_holm)
        )
    return (
        f"{excluding} of {len(family)} unadjusted intervals exclude zero (about "
        f"{0.05 * len(family):.1f} would by chance); {int(family.survives_holm.sum())} survive "
        f"Holm, {int(family.survives_bh.sum())} survive Benjamini-Hochberg, within the family "
        f"'{published.name}' split by metric. Caveat: {published.caveat}.{needs}"
    )


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


def per_trial_numbers(accuracy: pd.DataFrame, passk: pd.DataFrame, namespace: str) -> pd.DataFrame:
    """Under ``namespace``: each condition's mean trial accuracy with its cluster-bootstrap
    and Wilson bounds and design effect (``accuracy``: clustered and GEE beside), and its
    pass^k for every k."""
    rows = []
    for row in accuracy.itertuples():
        base = f"{namespace}.accuracy.{slug(row.condition)}"
        note = f"mean trial accuracy of {row.condition} ({row.source})"
        rows.append(value_number(f"{base}.estimate", points(row.estimate), note, unit="%"))
        for name, value, what in (
            ("cluster_ci_low", row.ci_low, "cluster-bootstrap 95% lower"),
            ("cluster_ci_high", row.ci_high, "cluster-bootstrap 95% upper"),
            ("wilson_low", row.wilson_low, "Wilson 95% lower"),
            ("wilson_high", row.wilson_high, "Wilson 95% upper"),
        ):
            if pd.notna(value):
                rows.append(
                    value_number(f"{base}.{name}", points(value), f"{what}, {note}", unit="%")
                )
        if pd.notna(row.design_effect):
            rows.append(
                value_number(
                    f"{base}.design_effect",
                    float(row.design_effect),
                    f"design effect 1 + (m - 1) ICC, {note}",
                    unit="ratio",
                    digits=2,
                )
            )
    rows += [
        value_number(
            f"{namespace}.pass_k.{slug(row.condition)}.k{row.k}",
            points(row.estimate),
            f"pass^{row.k} of {row.condition} ({row.source})",
            unit="%",
        )
        for row in passk.itertuples()
        if pd.notna(row.estimate)
    ]
    return numbers_table(rows)


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


def _paired_contrasts(section: Section, cells: pd.DataFrame, tag: str) -> None:
    pairs = inf.reasoning_pairs_of(cells)
    if pairs.empty:
        print("No model with one floor and one high condition here: no paired contrast.")
        return
    paired = pd.concat(
        [
            inf.paired_accuracy_difference(cells, pairs),
            inf.paired_binary_difference(cells, "modal_accuracy", pairs),
            inf.paired_binary_difference(cells, "over_refusal", pairs),
        ],
        ignore_index=True,
    )
    paired = inf.adjust_pvalues(paired, family="metric", named="reasoning-paired")
    section.table(
        paired,
        f"inference-{tag}-reasoning-paired",
        "Reasoning high minus floor paired by scenario, each test built on its interval's "
        "statistic: paired t-test and t interval (mean trial accuracy); McNemar score test "
        "and Tango's score interval (modal accuracy, over-refusal); Holm and "
        "Benjamini-Hochberg within each metric.",
        show_rows=40,
        columns=PAIRED_SHOWN,
    )
    section.table(
        inf.power_table(paired),
        f"inference-{tag}-power",
        "Minimum detectable paired difference (80% power, two-sided alpha .05) at the "
        "number of paired scenarios, given the observed discordance or spread.",
        show_rows=40,
    )


def per_trial_inference(
    section: Section,
    cells: pd.DataFrame,
    scenarios: pd.DataFrame,
    tag: str,
    namespace: str | None,
    *,
    pools: pd.DataFrame | None = None,
) -> None:
    """Run, show and write every per-trial method on ``cells`` (tables and figures named
    ``inference-<tag>-...``); record numbers under ``namespace`` (None: none). Pooled
    quantities run on ``pools`` (default ``cells``), whose ``source`` names the pools. When
    every cell was provider-filtered, it says so and writes nothing."""
    if not cells["modal_scored"].to_numpy(dtype=bool).any():
        print(f"No per-trial inference ({tag}): every cell was provider-filtered.")
        return
    pools = cells if pools is None else pools.assign(source=pools["source"].astype(str))
    clustered = inf.clustered_accuracy(cells)
    gee = inf.gee_accuracy(cells)[["source", "condition", "ci_low", "ci_high", "icc", "note"]]
    accuracy = clustered.merge(gee, on=["source", "condition"], suffixes=("", "_gee"))
    estimand = clustered.estimand.iloc[0] if len(clustered) else ""
    section.table(
        accuracy,
        f"inference-{tag}-clustered-accuracy",
        "Mean trial accuracy per condition: scenario-cluster bootstrap and GEE (exchangeable) "
        "95% intervals beside the Wilson interval on trials; ICC and design effect. "
        f"Estimand: {estimand}.",
        show_rows=40,
        columns=reader_columns(accuracy, ["estimand"]),
    )

    passk = inf.pass_hat_k(cells)
    top = int(passk["k"].max()) if len(passk) else None
    section.table(
        passk,
        f"inference-{tag}-pass-k",
        "pass^k: mean over cells of C(c,k)/C(n,k); filtered cells left out, null trials wrong. "
        + (
            f"pass^1 is mean trial accuracy and pass^{top} is {read_names(top)['pass']}."
            if top
            else ""
        ),
        show_rows=40,
    )
    print(pass_k_checks(passk, clustered, cells))
    section.figure(
        pass_k_figure(passk, f"pass^k ({tag})"),
        f"inference-{tag}-pass-k",
        f"pass^k against k per condition ({tag} verdicts).",
    )

    ranks = inf.rank_uncertainty(cells)
    section.table(
        ranks,
        f"inference-{tag}-ranks",
        "Rank by mean trial accuracy: scenario bootstrap marginal 95% rank intervals (one "
        "condition alone), simultaneous 95% rank sets (every condition at once; "
        "joint_coverage is their coverage in the resamples) and P(first), ties shared.",
        show_rows=40,
    )
    if ranks["rank_low"].isna().all():
        print(f"No rank figure ({tag}): {ranks['note'].iloc[0]}.")
    else:
        section.figure(
            rank_figure(ranks, f"Rank uncertainty ({tag}), scenario bootstrap"),
            f"inference-{tag}-ranks",
            f"Rank by mean trial accuracy with scenario-bootstrap marginal 95% rank intervals "
            f"(thick) and simultaneous 95% rank sets (thin) ({tag} verdicts).",
        )

    pooled = pd.concat(
        [
            inf.pooled_pattern_accuracy(pools, scenarios),
            inf.pooled_mirror_gap(pools, scenarios),
            inf.pooled_direction_asymmetry(pools, scenarios),
        ],
        ignore_index=True,
    )
    section.table(
        pooled,
        f"inference-{tag}-pooled",
        "Pooled quantities (Table 3 per pattern, mirror-vs-anchor gap, headline asymmetry): "
        "scenario-cluster bootstrap (percentile; scenarios resampled within pattern for Table 3 "
        "and the gap, within required gate for the asymmetry; a fallback or refusal named in "
        "method and note) beside an interval on cells that ignores clustering "
        "(independent_method names it).",
        show_rows=40,
        columns=reader_columns(pooled, POOLED_HIDDEN),
    )

    try:
        difficulty = inf.pattern_difficulty(cells, scenarios)
    except (ValueError, np.linalg.LinAlgError) as error:
        print(f"Pattern difficulty not estimable here: {error}")
    else:
        section.table(
            difficulty,
            f"inference-{tag}-pattern-difficulty",
            f"Odds ratio of a correct trial against {difficulty.reference.iloc[0]}, adjusted "
            f"for condition, scenarios as clusters ({difficulty.method.iloc[0]}).",
            show_rows=40,
            columns=reader_columns(difficulty, ["method", "reference"]),
        )

    _paired_contrasts(section, cells, tag)
    if namespace is not None:
        section.record(per_trial_numbers(accuracy, passk, namespace))


def by_source(cells: pd.DataFrame):
    """(source, cells of that source) for each verdict source (``published``,
    ``reference-policy``, ``run``), before pooling; conditions are compared within a source."""
    origin = cells[POOL_OF] if POOL_OF in cells.columns else cells["source"]
    origin = origin.astype(str)
    for source in sorted(origin.unique()):
        yield source, cells[origin == source]


def per_trial_by_source(section: Section) -> None:
    """:func:`per_trial_inference` on each source of per-trial verdicts, numbers under the
    source's namespace; pooled quantities keep the loader's pools."""
    for source, part in by_source(section.cells):
        print(
            f"### {source}: {part.condition.nunique()} condition(s), "
            f"{part.scenario_id.nunique()} scenario(s)"
        )
        per_trial_inference(
            section,
            part.assign(source=source),
            section.scenarios,
            slug(source),
            NAMESPACE.get(source),
            pools=part,
        )


def simulated_inference(section: Section, n_models: int = 15) -> str:
    """Every per-trial method on a simulated release (``n_models`` models at two settings,
    the release's number of scenarios, known truth); no number recorded. Returns how often
    the truth falls inside the cluster-bootstrap and the Wilson intervals."""
    from analysis.scoring.rules import score_cells

    trials, scenarios, truth = inf.simulate_release(
        n_models=n_models, n_scenarios=len(section.scenarios), seed=inf.SEED
    )
    cells = score_cells(trials, scenarios)
    per_trial_inference(section, cells, scenarios, "simulated", None)
    checked = inf.clustered_accuracy(cells).merge(truth, on="condition")
    true = checked.true_accuracy
    covered = int(((checked.ci_low <= true) & (true <= checked.ci_high)).sum())
    wilson = int(((checked.wilson_low <= true) & (true <= checked.wilson_high)).sum())
    return (
        f"Simulated truth inside the cluster-bootstrap interval for {covered} of "
        f"{len(checked)} conditions; inside the Wilson interval for {wilson}. "
        "Coverage over many replications: benchmarks/bench_coverage.py (README)."
    )
