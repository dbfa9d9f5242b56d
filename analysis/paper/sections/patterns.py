"""Section ``05-patterns``: Table 3, the hardest scenarios, severity and strata, per pool."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from analysis.paper.figures import (
    legend_below,
    percent_axis,
    rate_heatmap_figure,
    row_label,
    source_style,
)
from analysis.paper.outputs import stand_in_title
from analysis.paper.provenance import number_name, numbers_table, ratio_number
from analysis.scoring.breakdowns import Severity


def _pools(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["source"].astype(str)))


def pattern_numbers(gradient: pd.DataFrame) -> pd.DataFrame:
    """``patterns.<pattern>.modal_accuracy`` per pool and pattern of
    :func:`analysis.scoring.breakdowns.pattern_gradient`."""
    return numbers_table(
        ratio_number(
            number_name("patterns", row.boundary_pattern, "modal_accuracy", source=row.source),
            row.n_correct,
            row.n_cells,
            f"{row.boundary_pattern} modal accuracy ({row.source} cells)",
        )
        for row in gradient.itertuples(index=False)
    )


def pattern_figure(gradient: pd.DataFrame, sources: list[str]) -> plt.Figure:
    """Modal accuracy per construction pattern with Wilson 95% intervals on cells (none on
    fewer than 10 scenarios), one marker per pool, offset so that pools do not overlap."""
    order = list(dict.fromkeys(gradient["boundary_pattern"]))
    fig, ax = plt.subplots(figsize=(6.4, 0.35 * len(order) + 1.4))
    pools = _pools(gradient)
    offsets = {s: (i - (len(pools) - 1) / 2) * 0.6 / len(pools) for i, s in enumerate(pools)}
    for source, part in gradient.groupby("source"):
        style = source_style(source)
        ax.errorbar(
            100 * part["accuracy"],
            [order.index(p) + offsets[source] for p in part["boundary_pattern"]],
            xerr=[
                100 * (part["accuracy"] - part["accuracy_low"]),
                100 * (part["accuracy_high"] - part["accuracy"]),
            ],
            fmt=style["marker"],
            color=style["color"],
            capsize=2,
            linestyle="none",
            label=style["label"],
        )
    ax.set_yticks(range(len(order)), [p.replace("_", " ") for p in order])
    ax.invert_yaxis()
    percent_axis(ax)
    ax.set(
        xlabel="Modal accuracy (Wilson 95% interval on cells; none on < 10 scenarios)",
        title=stand_in_title("Modal accuracy per construction pattern", sources),
    )
    legend_below(ax)
    return fig


def hardest_figure(hardest: pd.DataFrame, sources: list[str], per_pool: int = 5) -> plt.Figure:
    """The first ``per_pool`` of :func:`analysis.scoring.breakdowns.hardest_scenarios` in each pool:
    the share of conditions whose modal decision is wrong."""
    top = hardest.groupby("source", sort=False).head(per_pool).reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(6.4, 0.26 * len(top) + 1.6))
    styles = [source_style(s) for s in top["source"]]
    bars = ax.barh(
        range(len(top)),
        100 * top["miss_rate"],
        color=[style["color"] for style in styles],
        edgecolor="white",
    )
    for bar, style in zip(bars, styles, strict=True):
        bar.set_hatch(style["hatch"])
    for source in dict.fromkeys(top["source"]):
        style = source_style(source)
        ax.barh(
            [0],
            [0],
            color=style["color"],
            hatch=style["hatch"],
            edgecolor="white",
            label=style["label"],
        )
    ax.set_yticks(range(len(top)), top["scenario_id"], fontsize=6)
    ax.invert_yaxis()
    percent_axis(ax)
    ax.set(
        xlabel="Conditions whose modal decision is wrong",
        title=stand_in_title(f"Hardest scenarios (first {per_pool} of each pool)", sources),
    )
    legend_below(ax)
    return fig


def severity_numbers(severity: Severity) -> pd.DataFrame:
    """Per pool, the modal miss rate of each tier weight and each condition's weighted miss
    (:func:`analysis.scoring.breakdowns.severity_by_tier`)."""
    rows = [
        ratio_number(
            number_name("severity", f"tier_w{row.tier_weight}", "miss_rate", source=row.source),
            row.n_misses,
            row.n_cells,
            f"modal misses of tier-weight-{row.tier_weight} cells ({row.source} cells)",
        )
        for row in severity.by_tier.itertuples(index=False)
    ]
    rows += [
        ratio_number(
            number_name("severity", row.condition, "weighted_miss", source=row.source),
            row.weight_missed,
            row.weight_scored,
            f"weighted miss of {row.condition} ({row.source} cells)",
        )
        for row in severity.by_condition.itertuples(index=False)
    ]
    return numbers_table(rows)


def severity_figure(severity: Severity, sources: list[str]) -> plt.Figure:
    """Share of cells missed by modal decision per tier weight, one bar per pool, each
    labelled with its number of cells."""
    by_tier = severity.by_tier
    fig, ax = plt.subplots()
    tiers = sorted(by_tier["tier_weight"].unique())
    pools = _pools(by_tier)
    width = 0.8 / max(len(pools), 1)
    for i, source in enumerate(pools):
        part = by_tier[by_tier["source"] == source].set_index("tier_weight")
        x = [tiers.index(t) + (i - (len(pools) - 1) / 2) * width for t in part.index]
        style = source_style(source)
        bars = ax.bar(
            x,
            100 * part["miss_rate"],
            width=width,
            color=style["color"],
            hatch=style["hatch"],
            edgecolor="white",
            label=style["label"],
        )
        ax.bar_label(  # upright, the label of a count in the thousands stays over its bar
            bars, labels=[f"n={n}" for n in part["n_cells"]], fontsize=6, padding=2, rotation=90
        )
    ax.set_xticks(range(len(tiers)), [f"weight {t}" for t in tiers])
    percent_axis(ax, "y")
    ax.set(
        ylabel="Modal misses (share of cells)",
        xlabel="Irreversibility tier weight",
        title=stand_in_title("Modal misses by irreversibility tier", sources),
    )
    ax.set_ylim(0, 115)
    legend_below(ax)
    return fig


def stratum_figure(table: pd.DataFrame, column: str, sources: list[str]) -> plt.Figure:
    """A heatmap of :func:`analysis.scoring.breakdowns.accuracy_by` over ``column``: one row per
    condition (with its pool), each cell its modal accuracy and number of cells; past
    ``analysis.paper.figures.FIGURE_ROWS`` conditions, the highest and the lowest."""
    words = column.replace("_", " ")
    rows = [row_label(c, s) for c, s in zip(table["condition"], table["source"], strict=True)]
    table = table.assign(row=rows)
    rates = table.pivot(index="row", columns=column, values="accuracy")
    counts = table.pivot(index="row", columns=column, values="n_cells")
    fig, ax = rate_heatmap_figure(rates, counts)
    ax.set(
        xlabel=words.capitalize(),
        ylabel="Condition [verdicts]",
        title=stand_in_title(f"Modal accuracy by {words}", sources),
    )
    plt.setp(ax.get_xticklabels(), rotation=35, ha="right", rotation_mode="anchor")
    return fig
