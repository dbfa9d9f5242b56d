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

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.inference.design_bound import NULLS_ALLOWED, least_clustered_counts


def _spread(row: Mapping[str, Any], metric: str, trials_per_cell: int) -> tuple[float, int]:
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
    """Per row of ``adjusted``: the smallest correlation across the two settings of the
    per-scenario outcomes at which a paired test would clear the row's Holm step (the
    module's docstring derives it); NaN without a p-value or a spread.

    Parameters
    ----------
    adjusted : DataFrame
        Reasoning contrasts tested on the published counts: :func:`unpaired_reasoning`
        after :func:`adjust_pvalues` within ``metric``, with ``model, metric, estimate, p``
        (``metric`` ``mean_trial_accuracy`` or ``over_refusal``).
    conditions : DataFrame
        The published condition counts (``analysis.load_conditions``), one floor and one
        high row per model of ``adjusted``: ``model, reasoning_level`` and, per metric,
        ``n_over_refusals, n_proceed_opportunities`` or ``n_cells, n_trials_correct,
        n_pass5, n_modal_correct, n_hold_opportunities``.
    trials_per_cell : int
        Trials of a condition on one scenario (5 in the release).
    alpha : float
        The family-wise level the Holm steps are taken at.

    Returns
    -------
    Series
        Float, on ``adjusted``'s index: the lower bound on the correlation the row's
        contrast needs. Below -1: any correlation will do; above 1: none will.

    See Also
    --------
    adjust_pvalues : The Holm adjustment whose steps this reads.
    unpaired_reasoning : The unpaired contrasts it is computed for.
    least_clustered_counts : The smallest spread the counts allow.

    Examples
    --------
    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"model": "m", "reasoning_level": ["floor", "high"],
    ...     "n_over_refusals": [10, 20], "n_proceed_opportunities": [50, 50]})
    >>> adjusted = pd.DataFrame({"model": ["m", "m"], "metric": ["over_refusal"] * 2,
    ...     "estimate": [0.2, 0.2], "p": [0.03, None]})
    >>> correlation_needed(adjusted, conditions, 5).round(3).tolist()
    [-0.281, nan]
    """
    rows = {
        (str(model), str(level)): row
        for model, level, row in zip(
            conditions["model"],
            conditions["reasoning_level"],
            conditions.to_dict("records"),
            strict=True,
        )
    }
    out = pd.Series(np.nan, index=adjusted.index, dtype="float64")
    for metric, family in adjusted.dropna(subset=["p"]).groupby("metric", sort=False):
        steps = len(family) - family["p"].rank(method="first").to_numpy() + 1
        z = stats.norm.ppf(1 - alpha / steps / 2)  # each row's Holm step
        for index, model, d, z_row in zip(
            family.index, family["model"], family["estimate"], z, strict=True
        ):
            v_floor, s_floor = _spread(rows[(str(model), "floor")], str(metric), trials_per_cell)
            v_high, s_high = _spread(rows[(str(model), "high")], str(metric), trials_per_cell)
            if not (v_floor > 0 and v_high > 0):
                continue
            scenarios, d = min(s_floor, s_high), float(d)
            out[index] = (v_high + v_floor - scenarios * d * d / (z_row * z_row)) / (
                2 * np.sqrt(v_high * v_floor)
            )
    return out
