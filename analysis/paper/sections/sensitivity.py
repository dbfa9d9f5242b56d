"""Section ``08-sensitivity``: the three sensitivity checks on the headline, per pool."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from analysis.corpus.scenarios import has_human_labels
from analysis.paper.figures import percent_axis, source_style
from analysis.paper.outputs import stand_in_title
from analysis.paper.provenance import number_name, numbers_table, ratio_number, value_number
from analysis.scoring.breakdowns import pool_cells
from analysis.scoring.ratio import Ratio
from analysis.scoring.sensitivity import (
    relabelled_by_humans,
    without_credit_hiring_mirrors,
    without_derived_flags,
)


def _pool_numbers(pool: str, part: pd.DataFrame, scenarios: pd.DataFrame) -> list[dict]:
    derived = without_derived_flags(part, scenarios)
    credit = without_credit_hiring_mirrors(part, scenarios)
    d, b, c = derived.without, credit.baseline, credit.without
    # Without human gates (a release without the human validation) the check has nothing
    # to count: its rates have no opportunity, and are left out as such below.
    h = relabelled_by_humans(part, scenarios).relabelled if has_human_labels(scenarios) else None
    none = Ratio(0, 0)
    # (name, ratio, description, digits): the under-refusals are small, so two decimals.
    counts = (
        ("derived.over_refusal", d.over, "over-refusal without derived-flag scenarios", 1),
        ("derived.under_refusal", d.under, "under-refusal without derived-flag scenarios", 2),
        ("derived.clean_detector_conflict", derived.conflict,
         "clean detector-conflict modal accuracy", 1),
        ("derived.clean_mirror", derived.mirror, "clean mirror modal accuracy", 1),
        ("human.over_refusal", h.over if h else none,
         "over-refusal against the human majority gate", 1),
        ("human.under_refusal", h.under if h else none,
         "under-refusal against the human majority gate", 2),
        ("credit_hiring.baseline_over_refusal", b.over, "modal over-refusal, all scenarios", 1),
        ("credit_hiring.over_refusal", c.over,
         "modal over-refusal without the credit and hiring mirrors", 1),
        ("credit_hiring.under_refusal", c.under,
         "modal under-refusal without the credit and hiring mirrors", 1),
    )  # fmt: skip
    rows = [
        ratio_number(
            number_name("sensitivity", *key.split("."), source=pool),
            ratio.k,
            ratio.n,
            f"{description} ({pool} cells)",
            digits=digits,
        )
        for key, ratio, description, digits in counts
        if ratio.n
    ]
    rows.append(
        value_number(
            number_name("sensitivity", "derived", "excluded_scenarios", source=pool),
            len(set(derived.excluded) & set(part["scenario_id"].astype(str))),
            f"derived-flag scenarios left out of the {pool} cells",
            unit="scenarios",
            digits=None,
        )
    )
    return rows


def sensitivity_numbers(cells: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """Per pool: over- and under-refusal without the derived-flag scenarios (and the clean
    detector-conflict and mirror accuracy), against the human majority gate (where the
    scenarios carry human gates), and without the credit and hiring mirrors; a rate with no
    opportunity is left out."""
    pooled = pool_cells(cells)
    source = pooled["source"].astype(str)
    rows = []
    for pool in sorted(source.unique()):
        rows += _pool_numbers(pool, pooled[source == pool], scenarios)
    return numbers_table(rows)


def sensitivity_figure(table: pd.DataFrame, sources: list[str]) -> plt.Figure:
    """Pooled over- and under-refusal under each check of
    :func:`analysis.scoring.sensitivity.sensitivity_table`, one marker per pool."""
    checks = list(dict.fromkeys(table["check"]))
    pools = list(dict.fromkeys(table["source"]))
    fig, axes = plt.subplots(
        1, 2, figsize=(7.2, 0.4 * len(checks) + 2.0), sharey=True, layout="constrained"
    )
    for ax, rate, title in (
        (axes[0], "over_refusal", "Over-refusal"),
        (axes[1], "under_refusal", "Under-refusal"),
    ):
        for i, source in enumerate(pools):
            part = table[table["source"] == source]
            style = source_style(source)
            offset = (i - (len(pools) - 1) / 2) * 0.6 / len(pools)
            ax.scatter(
                100 * part[rate],
                [checks.index(c) + offset for c in part["check"]],
                marker=style["marker"],
                s=32,
                color=style["color"],
                label=style["label"],
            )
        percent_axis(ax)
        ax.set(title=title, xlabel="Share of opportunities")
    axes[0].set_yticks(range(len(checks)), checks)
    axes[0].invert_yaxis()
    fig.legend(
        *axes[1].get_legend_handles_labels(), loc="outside lower center", fontsize=7, ncols=2
    )
    fig.suptitle(stand_in_title("Over- and under-refusal under each sensitivity check", sources))
    return fig
