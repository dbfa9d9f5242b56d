"""Section ``06-mirrors``: public-harm anchors against their incident mirrors, per pool."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from analysis.corpus.scenarios import has_human_labels
from analysis.paper.figures import (
    label_points,
    legend_below,
    percent_axis,
    row_label,
    scatter_coinciding,
    source_style,
)
from analysis.paper.outputs import stand_in_title
from analysis.paper.provenance import number_name, numbers_table, ratio_number, value_number
from analysis.scoring.breakdowns import (
    ANCHOR,
    CONFLICT,
    MIRROR,
    mirror_gap,
    per_condition_pattern_accuracy,
    pool_cells,
)
from analysis.scoring.sensitivity import relabelled_cells

#: The incident whose mirror the paper singles out (``mirrors.apple_card.*``).
APPLE_CARD = "Apple Card"


def incident_mirror(scenarios: pd.DataFrame, incident: str) -> str | None:
    """The one scenario whose mirrored incident names ``incident`` (case-insensitive), or
    None when no scenario, or more than one, does."""
    named = scenarios["mirror_incident"].astype("string").str.contains(incident, case=False)
    ids = scenarios.loc[named.fillna(False).to_numpy(dtype=bool), "scenario_id"].astype(str)
    return ids.iloc[0] if len(ids) == 1 else None


def _by_pool(cells: pd.DataFrame):
    pooled = pool_cells(cells)
    source = pooled["source"].astype(str)
    for pool in sorted(source.unique()):
        yield pool, pooled[source == pool]


def mirror_numbers(cells: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """Per pool: modal accuracy of anchors, mirrors and detector conflicts, anchor minus
    mirror in points (from the raw fractions), and how many conditions decide the Apple
    Card mirror right."""
    apple = incident_mirror(scenarios, APPLE_CARD)
    rows = []
    for pool, part in _by_pool(cells):
        gap = mirror_gap(part, scenarios)
        for pattern, accuracy in (
            (ANCHOR, gap.anchor),
            (MIRROR, gap.mirror),
            (CONFLICT, gap.conflict),
        ):
            if accuracy.n:
                rows.append(
                    ratio_number(
                        number_name("mirrors", pattern, "modal_accuracy", source=pool),
                        accuracy.k,
                        accuracy.n,
                        f"{pattern} modal accuracy ({pool} cells)",
                    )
                )
        if gap.anchor.n and gap.mirror.n:
            rows.append(
                value_number(
                    number_name("mirrors", "anchor_minus_mirror", source=pool),
                    100 * gap.gap,
                    f"anchor minus mirror modal accuracy, from the raw fractions ({pool} cells)",
                    unit="points",
                )
            )
        decided = part[(part["scenario_id"].astype(str) == apple) & part["modal_scored"]]
        if len(decided):
            rows.append(
                value_number(
                    number_name("mirrors", "apple_card", "modal_correct", source=pool),
                    int(decided["modal_correct"].sum()),
                    "conditions whose modal decision on the Apple Card mirror is right "
                    f"({pool} cells)",
                    unit="conditions",
                    digits=None,
                )
            )
    return numbers_table(rows)


def human_label_gap_numbers(cells: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """Per pool, anchor minus mirror modal accuracy in points when every cell is scored
    against the three-rater majority gate instead of the key (none where the scenarios carry
    no human gates)."""
    rows = []
    if not has_human_labels(scenarios):
        return numbers_table(rows)
    for pool, part in _by_pool(relabelled_cells(pool_cells(cells), scenarios)):
        gap = mirror_gap(part, scenarios)
        if gap.anchor.n and gap.mirror.n:
            rows.append(
                value_number(
                    number_name("mirrors", "human_labels", "anchor_minus_mirror", source=pool),
                    100 * gap.gap,
                    "anchor minus mirror modal accuracy under the human-majority labels "
                    f"({pool} cells)",
                    unit="points",
                )
            )
    return numbers_table(rows)


def mirror_table(cells: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """Per condition: modal accuracy on anchors, mirrors and detector conflicts."""
    return per_condition_pattern_accuracy(cells, scenarios, (ANCHOR, MIRROR, CONFLICT))


def mirror_figure(scatter: pd.DataFrame, sources: list[str]) -> plt.Figure:
    """Mirror against anchor modal accuracy, one point per condition of
    :func:`analysis.scoring.breakdowns.per_condition_pattern_accuracy`; published conditions at the
    same point share one marker (:func:`analysis.paper.figures.scatter_coinciding`). Every
    other condition is named once, at its point, with where its verdicts come from
    (:func:`analysis.paper.figures.row_label`; those at one point in one label), the names
    placed apart (:func:`analysis.paper.figures.label_points`); the legend shows one marker
    per origin (published, reference policy, run) and names the conditions without a point."""
    fig, ax = plt.subplots(figsize=(5.2, 4.8))
    ax.plot([0, 100], [0, 100], linestyle=":", color="0.5", marker="", label="equal accuracy")
    named: dict[tuple[float, float], list[str]] = {}  # the other pools' points, by position
    origins: dict[str, dict] = {}
    for source, part in scatter.groupby("source"):
        origin = str(source).partition(": ")[0]
        x = 100 * part[f"{ANCHOR}_accuracy"]
        y = 100 * part[f"{MIRROR}_accuracy"]
        missing = ~(x.notna() & y.notna())
        if source == "published":
            style = source_style(source)
            if missing.all():
                style["label"] += " (no point: no scored anchor or mirror)"
            elif missing.any():
                style["label"] += (
                    f" ({int(missing.sum())} of {len(part)} conditions without a point: "
                    "no scored anchor or mirror)"
                )
            scatter_coinciding(
                ax,
                x,
                y,
                size=40,
                label=style["label"],
                fontsize=6,
                marker=style["marker"],
                color=style["color"],
            )
            continue
        entry = origins.setdefault(origin, {"style": source_style(origin), "without": []})
        style = entry["style"]
        ax.scatter(x, y, marker=style["marker"], s=40, color=style["color"], edgecolor="white")
        for condition, at_x, at_y in zip(part["condition"], x, y, strict=True):
            name = row_label(str(condition), origin)
            if pd.isna(at_x) or pd.isna(at_y):
                entry["without"].append(name)
            else:
                named.setdefault((float(at_x), float(at_y)), []).append(name)
    for entry in origins.values():  # one legend entry per origin
        style, without = entry["style"], sorted(entry["without"])
        label = style["label"]
        if without:
            label += f"; no point (no scored anchor or mirror): {', '.join(without)}"
        ax.scatter([], [], marker=style["marker"], s=40, color=style["color"], label=label)
    ax.set(
        xlabel="Public-harm anchors: modal accuracy",
        ylabel="Incident mirrors: modal accuracy",
        title=stand_in_title("Anchors against mirrors per condition", sources),
    )
    percent_axis(ax, "x")
    percent_axis(ax, "y")
    legend_below(ax, ncols=1)
    label_points(ax, {point: "\n".join(sorted(names)) for point, names in named.items()})
    return fig
