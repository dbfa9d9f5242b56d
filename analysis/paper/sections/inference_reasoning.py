"""Does reasoning high beat floor? Section ``10-inference``'s reasoning contrasts: unpaired
from the published counts (with the numbers they record and the correlation a paired test
would need), and paired by scenario on per-trial verdicts, with the power of the design.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis import inference as inf
from analysis.paper.presentation import reader_columns
from analysis.paper.provenance import numbers_table, points, slug, value_number

if TYPE_CHECKING:
    from analysis.paper.sections.opening import Section

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
    "df",
    "note",
]


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


def unpaired_columns(unpaired: pd.DataFrame) -> list[str]:
    """:func:`unpaired_contrasts`'s columns for a reader (constant and empty ones left out)."""
    return reader_columns(unpaired, UNPAIRED_HIDDEN)


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
    note = (
        "high minus floor, published counts, unpaired: Miettinen-Nurminen score interval "
        "(inverts the score test; each scenario counted once for mean-trial accuracy, the "
        "largest design effect; ignores pairing)"
    )
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


#: Contrasts surviving Holm whose needed correlation the summary spells out.
CAVEATS_SHOWN = 10


def unpaired_summary(unpaired: pd.DataFrame) -> str:
    """How many unadjusted intervals exclude zero against how many would by chance, how many
    contrasts survive each adjustment, and what correlation the first
    :data:`CAVEATS_SHOWN` survivors need (the rest: the table's column)."""
    family = unpaired.dropna(subset=["p"])
    excluding = int(((family.ci_low > 0) | (family.ci_high < 0)).sum())
    published = inf.FAMILIES["reasoning-published"]
    needs = ""
    if "rho_needed_holm" in family.columns:
        survivors = family.loc[family.survives_holm.astype(bool)]
        survivors = survivors.loc[survivors.rho_needed_holm.notna()]
        needs = "".join(
            f" For {r.contrast} ({r.metric}), "
            + pairing_caveat(r.rho_needed_holm).removeprefix("; ")
            + "."
            for r in survivors.head(CAVEATS_SHOWN).itertuples()
        )
        if len(survivors) > CAVEATS_SHOWN:
            needs += (
                f" The other {len(survivors) - CAVEATS_SHOWN} surviving contrasts' needed "
                "correlations are in the table's rho_needed_holm column."
            )
    return (
        f"{excluding} of {len(family)} unadjusted intervals exclude zero (about "
        f"{0.05 * len(family):.1f} would by chance); {int(family.survives_holm.sum())} survive "
        f"Holm, {int(family.survives_bh.sum())} survive Benjamini-Hochberg, within the family "
        f"'{published.name}' split by metric. Caveat: {published.caveat}.{needs}"
    )


def paired_contrasts(section: Section, cells: pd.DataFrame, tag: str) -> None:
    """Show and write reasoning high minus floor paired by scenario on ``cells`` (each model
    with one floor and one high condition), adjusted within each metric, and the power of the
    paired design (tables named ``inference-<tag>-...``); says so when no model has both."""
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
        "Reasoning high minus floor paired by scenario, each test built on its 95% interval's "
        "statistic: paired t-test and t interval at the effective (Satterthwaite) df, column "
        "df (mean trial accuracy); McNemar score test "
        "and Tango's score interval (modal accuracy, over-refusal); Holm and "
        "Benjamini-Hochberg within each metric.",
        show_rows=40,
        columns=PAIRED_SHOWN,
    )
    section.table(
        inf.power_table(paired),
        f"inference-{tag}-power",
        "Minimum detectable paired difference (80% power, two-sided alpha .05) at the "
        "number of paired scenarios, given the observed discordance (McNemar's score test, "
        "exact power) or spread (paired t at the contrast's effective df, its noncentral t "
        "corrected for the differences' skewness and kurtosis).",
        show_rows=40,
    )
