"""pass^k: the chance that k trials of a cell, drawn without replacement, are all correct."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import comb

from analysis.inference._arrays import (
    N_BOOT,
    SEED,
    by_source,
    cell_arrays,
    guarded_interval,
    percentile_interval,
    ratio,
    scenario_weights,
)

#: The columns :func:`pass_hat_k` returns.
PASS_K_COLUMNS = [
    "source",
    "condition",
    "k",
    "estimate",
    "ci_low",
    "ci_high",
    "n_clusters",
    "n_short",
    "method",
    "note",
]
METHOD = "unbiased C(c,k)/C(n,k); scenario-cluster bootstrap"


def pass_hat_k(
    cells: pd.DataFrame, k_max: int | None = None, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """pass^k for k = 1..k_max per condition: the mean over modal-scored cells of
    C(c, k) / C(n, k), c correct trials out of n (the unbiased estimator).

    Provider-filtered cells are left out (a source with no other cell gives no row); trials
    with no decision count as wrong, as in mean-trial accuracy. A condition with a scored
    cell of fewer than k trials gets no pass^k (``note`` says how many; dropping those cells
    would let pass^k rise with k). pass^1 is the mean over
    cells of c / n (mean-trial accuracy when every cell has the same n) and pass^n is the
    share of cells with every trial correct (pass5). Intervals: scenario-cluster bootstrap.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``).
    k_max : int, optional
        Largest k; default the largest number of trials in a cell.
    n_boot, seed : int
        Resamples and seed of the scenario-cluster bootstrap.

    Returns
    -------
    DataFrame
        ``source, condition, k, estimate, ci_low, ci_high, n_clusters, n_short, method,
        note`` (intervals as :func:`~analysis.inference._arrays.guarded_interval`).

    See Also
    --------
    clustered_accuracy : pass^1's counterpart, mean-trial accuracy, with its ICC.
    analysis.condition_scores : pass5 (every trial correct) as Table 2 gives it.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"source": "run", "scenario_id": ["a", "b"],
    ...     "condition": "m (off)", "n_trials": [5, 5], "n_correct": [5, 3],
    ...     "modal_scored": True, "modal_correct": True, "modal_decision": "allowed",
    ...     "required_gate": "allowed", "directionally_scored": True})
    >>> pass_hat_k(cells, n_boot=200)[["k", "estimate"]].round(3).to_dict("list")
    {'k': [1, 2, 3, 4, 5], 'estimate': [0.8, 0.65, 0.55, 0.5, 0.5]}
    """
    rows = []
    for offset, (source, part) in enumerate(by_source(cells)):
        arrays = cell_arrays(part)
        if not arrays.conditions:  # every cell provider-filtered: nothing to estimate
            continue
        top = int(arrays.n_trials.max()) if k_max is None else int(k_max)
        weights = scenario_weights(len(arrays.scenarios), n_boot, seed + offset)
        for k in range(1, top + 1):
            scored = arrays.scored > 0
            present = scored & (arrays.n_trials >= k)
            value = np.where(
                present, ratio(comb(arrays.n_correct, k), comb(arrays.n_trials, k)), 0.0
            )
            low, high = percentile_interval(ratio(weights @ value.T, weights @ present.T))
            for j, condition in enumerate(arrays.conditions):
                n, short = int(present[j].sum()), int((scored[j] & ~present[j]).sum())
                row = {"source": source, "condition": condition, "k": k, "n_clusters": n}
                if short:  # leaving them out would make pass^k a rate of other cells
                    note = f"refused: {short} scored cell(s) with fewer than {k} trials"
                    rows.append(
                        {
                            **row,
                            "estimate": np.nan,
                            "ci_low": np.nan,
                            "ci_high": np.nan,
                            "n_short": short,
                            "method": METHOD,
                            "note": note,
                        }
                    )
                    continue
                estimate = value[j].sum() / n if n else np.nan
                interval = guarded_interval(low[j], high[j], estimate, n, METHOD)
                rows.append({**row, "estimate": estimate, **interval, "n_short": 0})
    return pd.DataFrame(rows, columns=PASS_K_COLUMNS)
