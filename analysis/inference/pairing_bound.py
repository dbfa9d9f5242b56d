"""How much pairing an unpaired claim needs: for each reasoning contrast tested on the
published counts, the smallest correlation across the two settings of the per-scenario
outcomes at which a paired test over scenarios would clear the contrast's Holm threshold.

The published counts hide the pairing (the correlation rho of a scenario's outcome at floor
and at high), and the paired z-test of the mean difference d over S scenarios has variance
(s_h^2 + s_f^2 - 2 rho s_h s_f) / S, s the spread across scenarios of each setting's
per-scenario outcome. The counts bound that spread from below: for mean-trial accuracy, the
spread of the least clustered histogram (:mod:`.design_bound`, null trials allowed); for
over-refusal, one binary outcome per proceed scenario, p (1 - p). So the contrast clears its
Holm step alpha / (K - j + 1) (j its place by p among the K of its family, as the counts
order them) only if rho >= (s_h^2 + s_f^2 - S d^2 / z^2) / (2 s_h s_f), a lower bound on the
correlation needed: more clustering needs more. Below -1: any correlation will do; above 1:
none will.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.inference.design_bound import NULLS_ALLOWED, least_clustered_counts


def _spread(row: pd.Series, metric: str, trials_per_cell: int) -> tuple[float, int]:
    """(smallest variance across scenarios of the per-scenario outcome, scenarios)."""
    if metric == "over_refusal":
        k, n = int(row["n_over_refusals"]), int(row["n_proceed_opportunities"])
        p = k / n if n else np.nan
        return (p * (1 - p) * n / (n - 1) if n > 1 else np.nan), n
    cells = int(row["n_cells"])
    counts = least_clustered_counts(
        cells,
        trials_per_cell,
        int(row["n_trials_correct"]),
        int(row["n_pass5"]),
        int(row["n_modal_correct"]),
        cells - int(row["n_hold_opportunities"]) - int(row["n_proceed_opportunities"]),
        NULLS_ALLOWED,
    )
    if counts is None or cells < 2:
        return np.nan, cells
    return float((counts / trials_per_cell).var(ddof=1)), cells


def correlation_needed(
    adjusted: pd.DataFrame, conditions: pd.DataFrame, trials_per_cell: int, alpha: float = 0.05
) -> pd.Series:
    """Per row of ``adjusted`` (:func:`~analysis.inference.unpaired_reasoning` after
    :func:`~analysis.inference.adjust_pvalues` within ``metric``): the smallest correlation
    across settings its Holm step needs (module docstring); NaN without a p or a spread.

    Examples
    --------
    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"model": ["m", "m"], "reasoning_level": ["floor", "high"],
    ...     "n_over_refusals": [10, 20], "n_proceed_opportunities": [50, 50]})
    >>> adjusted = pd.DataFrame({"model": ["m"], "metric": ["over_refusal"],
    ...     "estimate": [0.2], "p": [0.03]})
    >>> round(float(correlation_needed(adjusted, conditions, 5).iloc[0]), 3)
    -0.281
    """
    levels = conditions.assign(
        model=conditions["model"].astype(str), level=conditions["reasoning_level"].astype(str)
    ).set_index(["model", "level"])
    out = pd.Series(np.nan, index=adjusted.index, dtype="float64")
    for metric, family in adjusted.dropna(subset=["p"]).groupby("metric", sort=False):
        order = family["p"].rank(method="first").astype(int)
        size = len(family)
        for index, row in family.iterrows():
            z = stats.norm.ppf(1 - alpha / (size - order[index] + 1) / 2)
            floor = levels.loc[(str(row["model"]), "floor")]
            high = levels.loc[(str(row["model"]), "high")]
            v_floor, s_floor = _spread(floor, str(metric), trials_per_cell)
            v_high, s_high = _spread(high, str(metric), trials_per_cell)
            scenarios = min(s_floor, s_high)
            if not (v_floor > 0 and v_high > 0):
                continue
            d = float(row["estimate"])
            out[index] = (v_high + v_floor - scenarios * d * d / (z * z)) / (
                2 * np.sqrt(v_high * v_floor)
            )
    return out
