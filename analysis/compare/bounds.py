"""The clustered bound of a change in mean-trial accuracy computed from counts: each
release's smallest design effect its published counts allow
(:func:`analysis.inference.design_effect_bound`, null trials allowed) shrinks that side's
trials to an effective sample size, and Newcombe's interval of the difference is taken at
those sizes.

It is not a 95% interval of the change: it is a floor on the width of one. A valid
scenario-clustered interval of the change from per-trial verdicts that ignores the pairing
(:func:`analysis.inference._arrays.effective_size_difference`: each side's Clopper-Pearson
interval at its Korn-Graubard effective size, combined as Newcombe's) has effective sizes no
larger than these, and on every simulated pair of releases of the package's calibration it
was at least as wide (docs/inference.md). A paired interval on shared scenarios can be
narrower: the bound ignores the pairing by scenario."""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import confint_proportions_2indep

from analysis.inference.design_bound import NULLS_ALLOWED, design_effect_bound

BOUND_METHOD = (
    "not a 95% interval: a floor on the width of a scenario-clustered, unpaired 95% interval "
    "of the change; Newcombe at each release's effective sample size n / DEFF, DEFF the "
    "smallest design effect its counts allow (null trials allowed)"
)
#: The columns the bound adds to a change's row.
BOUND_COLUMNS = [
    "design_effect_min_base",
    "design_effect_min_head",
    "clustered_bound_low",
    "clustered_bound_high",
    "clustered_bound_note",
]


def _side(counts: pd.Series) -> pd.Series | str:
    """One release's ``design_effect_bound`` row for a condition's counts, or why none."""
    cells, trials = int(counts["n_cells"]), int(counts["n_trials"])
    if cells <= 0 or trials % cells:
        return "no bound: no scored cell or unequal trials per cell"
    row = design_effect_bound(
        counts.to_frame().T.assign(condition="x"), trials // cells, NULLS_ALLOWED
    ).iloc[0]
    return row if pd.notna(row["design_effect_min"]) else f"no bound: {row['note']}"


def clustered_change_bound(before: pd.Series, after: pd.Series) -> dict:
    """The clustered bound (a floor on a clustered interval's width, not a 95% interval) of
    ``after`` minus ``before`` in mean-trial accuracy, from each release's counts
    (``n_cells, n_trials, n_trials_correct, n_pass5, n_modal_correct,
    n_hold_opportunities, n_proceed_opportunities``): the :data:`BOUND_COLUMNS`, blank
    bounds and a note where either side's counts allow none.

    Examples
    --------
    >>> import pandas as pd
    >>> side = {"n_cells": 4, "n_trials": 20, "n_trials_correct": 12, "n_pass5": 1,
    ...     "n_modal_correct": 2, "n_hold_opportunities": 2, "n_proceed_opportunities": 2}
    >>> out = clustered_change_bound(pd.Series(side), pd.Series(side))
    >>> round(out["design_effect_min_base"], 4), round(out["clustered_bound_high"], 4)
    (1.5385, 0.334)
    """
    sides = [_side(before), _side(after)]
    blank = dict.fromkeys(BOUND_COLUMNS, np.nan)
    notes = [s for s in sides if isinstance(s, str)]
    if notes:
        return {**blank, "clustered_bound_note": "; ".join(dict.fromkeys(notes))}
    (k0, n0), (k1, n1) = (
        (s["estimate"] * s["n_effective"], s["n_effective"])
        for s in sides  # type: ignore[index]
    )
    low, high = confint_proportions_2indep(k1, n1, k0, n0, method="newcomb", compare="diff")
    return {
        "design_effect_min_base": float(sides[0]["design_effect_min"]),  # type: ignore[index]
        "design_effect_min_head": float(sides[1]["design_effect_min"]),  # type: ignore[index]
        "clustered_bound_low": float(low),
        "clustered_bound_high": float(high),
        "clustered_bound_note": BOUND_METHOD,
    }
