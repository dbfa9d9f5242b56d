"""Section ``11-detectable``: what this release can detect. Its design (scenarios, trials
per cell, intraclass correlation, discordance), estimated from the release's counts and its
published per-trial verdicts where present (:func:`analysis.inference.detectable_release.
release_design`); the minimum detectable difference of three comparisons at that design
(:func:`analysis.inference.detectable_effect`); the scenarios a release needs to detect
:data:`TARGET_DIFFERENCE`; and Table 2's adjacent gaps beside the gap this release
resolves (:func:`analysis.inference.detectable_release.rank_gaps`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.inference.detectable import (
    ALPHA,
    COMPARISONS,
    GATE,
    PAIRED,
    POWER,
    UNPAIRED,
    detectable_effect,
    scenarios_needed,
)
from analysis.inference.detectable_release import DESIGN_FIELDS
from analysis.paper.figures import tight_layout
from analysis.paper.provenance import numbers_table, value_number

#: The difference whose scenarios needed the section states (a difference of proportions).
TARGET_DIFFERENCE = 0.05
#: Each comparison's short name in ``numbers.json``.
SHORT = {PAIRED: "paired", UNPAIRED: "unpaired", GATE: "gate"}
#: Each design field's unit and digits in ``numbers.json`` and what it is.
FIELDS = {
    "n_scenarios": ("scenarios", None, "scenarios of the release"),
    "trials_per_cell": ("trials", None, "trials per cell"),
    "icc": ("ratio", 3, "intraclass correlation of the trials within a cell"),
    "discordance": ("%", 1, "share of scenarios whose modal outcome differs between settings"),
    "rate": ("%", 1, "accuracy the unpaired and gate comparisons are stated at"),
    "gate_rate": ("%", 1, "the reference gate's accuracy"),
}
#: The scenario counts the figure draws each comparison's MDD at.
CURVE = np.unique(np.geomspace(10, 5000, 60).round().astype(int))


def _shown(field: str, value: float) -> str:
    """A design value as the design table shows it (a share in percent)."""
    unit, digits, _ = FIELDS[field]
    if digits is None:
        return str(int(value))
    return f"{100 * value:.{digits}f}%" if unit == "%" else f"{value:.{digits}f}"


def design_table(design: dict, basis: dict) -> pd.DataFrame:
    """The design, one row per field: its value (as text, each at its own precision) and
    where it comes from."""
    return pd.DataFrame(
        [
            {
                "field": field,
                "value": _shown(field, design[field]),
                "what": FIELDS[field][2],
                "from": basis[field],
            }
            for field in DESIGN_FIELDS
        ]
    )


def needed_table(design: dict, difference: float = TARGET_DIFFERENCE) -> pd.DataFrame:
    """Per comparison, the scenarios needed to detect ``difference`` at the release's
    design but its scenarios (:func:`analysis.inference.scenarios_needed`)."""
    rest = {k: v for k, v in design.items() if k != "n_scenarios"}
    return scenarios_needed(difference, alpha=ALPHA, power=POWER, **rest)


def _points(value: float) -> float | str:
    """A difference of proportions in points, or a word where there is none."""
    return round(100 * float(value), 6) if np.isfinite(value) else "none at 80% power"


def detectable_numbers(
    design: dict, mdd: pd.DataFrame, needed: pd.DataFrame, gaps: pd.DataFrame
) -> pd.DataFrame:
    """The section's numbers: the design (``detect.design.*``), each comparison's MDD
    (``detect.mdd.*``) and scenarios needed for :data:`TARGET_DIFFERENCE`
    (``detect.needed.*``), and the adjacent ranks (``detect.ranks.*``, ``detect.leader.*``)."""
    rows = []
    for field in DESIGN_FIELDS:
        unit, digits, what = FIELDS[field]
        value = design[field]
        if unit == "%":
            value = 100 * float(value)
        rows.append(value_number(f"detect.design.{field}", value, what, unit=unit, digits=digits))
    rows.append(
        value_number(
            "detect.design.design_effect",
            1 + (design["trials_per_cell"] - 1) * design["icc"],
            "design effect 1 + (m - 1) ICC of the release's design",
            unit="ratio",
            digits=2,
        )
    )
    level = f"at {POWER:.0%} power and a two-sided {ALPHA:.0%} level"
    for row in mdd.itertuples():
        rows.append(
            value_number(
                f"detect.mdd.{SHORT[row.comparison]}",
                _points(row.mdd),
                f"minimum detectable difference, {row.comparison}, {level}; {row.method}",
                unit="points",
            )
        )
    rows.append(
        value_number(
            "detect.needed.difference",
            100 * TARGET_DIFFERENCE,
            "the difference the scenarios needed are stated for",
            unit="points",
        )
    )
    for row in needed.itertuples():
        found = row.scenarios_needed
        rows.append(
            value_number(
                f"detect.needed.{SHORT[row.comparison]}",
                int(found) if pd.notna(found) else "no number of",
                f"scenarios needed to detect {100 * TARGET_DIFFERENCE:g} points, "
                f"{row.comparison}, {level}, at the release's trials, ICC and rates",
                unit="scenarios",
                digits=None,
            )
        )
    if len(gaps):
        rows += [
            value_number(
                "detect.ranks.pairs", len(gaps), "pairs of adjacent Table 2 ranks",
                unit="pairs", digits=None,
            ),
            value_number(
                "detect.ranks.resolvable", int(gaps["resolvable"].sum()),
                f"adjacent Table 2 gaps at least their minimum detectable difference ({level})",
                unit="pairs", digits=None,
            ),
            value_number(
                "detect.ranks.smallest_resolvable", _points(gaps["mdd"].min()),
                f"smallest gap between adjacent Table 2 ranks this release resolves ({level}; "
                "the least over pairs, at the upper rank's accuracy and the pair's ICC)",
                unit="points",
            ),
        ]  # fmt: skip
        lead = gaps.iloc[0]
        found = lead["scenarios_needed"]  # none for a tie, or a gap beyond every design
        needed_lead = int(found) if pd.notna(found) else "no number of"
        rows += [
            value_number(
                "detect.leader.gap", _points(lead["gap"]),
                f"mean trial accuracy of the leader, {lead['upper']}, minus the second's",
                unit="points",
            ),
            value_number(
                "detect.leader.mdd", _points(lead["mdd"]),
                f"smallest gap below the leader this release resolves ({level})",
                unit="points",
            ),
            value_number(
                "detect.leader.scenarios_needed",
                needed_lead,
                f"scenarios needed to separate the leader from the second at their gap ({level})",
                unit="scenarios", digits=None,
            ),
        ]  # fmt: skip
    return numbers_table(rows)


def mdd_figure(design: dict, title: str) -> plt.Figure:
    """Each comparison's minimum detectable difference against the number of scenarios at
    the release's design, the release's own number marked."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    rest = {k: v for k, v in design.items() if k != "n_scenarios"}
    styles = {PAIRED: "-", UNPAIRED: "--", GATE: ":"}
    curves = pd.concat(detectable_effect(int(n), **rest) for n in CURVE)
    for comparison in COMPARISONS:
        curve = curves.loc[curves["comparison"] == comparison]
        ax.plot(curve["n_scenarios"], 100 * curve["mdd"].astype(float), styles[comparison],
                color="0.2", label=comparison)  # fmt: skip
    ax.axvline(design["n_scenarios"], color="#0072B2", lw=1)
    ax.annotate(f"this release: {design['n_scenarios']}", (design["n_scenarios"], 0),
                xycoords=("data", "axes fraction"), xytext=(4, 6), textcoords="offset points",
                fontsize=8, color="#0072B2")  # fmt: skip
    ax.set(xscale="log", xlabel="scenarios", ylabel="minimum detectable difference (points)",
           title=title, ylim=(0, None))  # fmt: skip
    ax.legend(fontsize=7)
    tight_layout(fig)
    return fig


def summary(design: dict, mdd: pd.DataFrame, gaps: pd.DataFrame) -> str:
    """A few lines: what the release detects, and its adjacent ranks against that."""
    by = mdd.set_index("comparison")["mdd"]
    lines = [
        f"{design['n_scenarios']} scenarios x {design['trials_per_cell']} trials, ICC "
        f"{design['icc']:.3f}: at {POWER:.0%} power and a {ALPHA:.0%} level",
        *(f"  {c}: {100 * by[c]:.1f} points" for c in COMPARISONS if np.isfinite(by[c])),
        *(f"  {c}: none at this design" for c in COMPARISONS if not np.isfinite(by[c])),
    ]
    if len(gaps):
        lead = gaps.iloc[0]
        lines.append(
            f"{int(gaps['resolvable'].sum())} of {len(gaps)} adjacent Table 2 gaps reach their "
            f"minimum detectable difference; the leader leads the second by "
            f"{100 * lead['gap']:.1f} points, against {100 * lead['mdd']:.1f} detectable"
        )
    return "\n".join(lines)
