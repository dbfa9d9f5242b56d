"""pass^k: the chance that k trials of a cell, drawn without replacement, are all correct."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import comb

from analysis.inference._arrays import (
    EFFECTIVE_SIZE_CP,
    N_BOOT,
    SEED,
    by_source,
    cell_arrays,
    effective_size_row,
    ratio,
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
METHOD = "unbiased C(c,k)/C(n,k); " + EFFECTIVE_SIZE_CP


def pass_hat_k(
    cells: pd.DataFrame, k_max: int | None = None, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """pass^k for k = 1..k_max per condition: the mean over modal-scored cells of
    C(c, k) / C(n, k), c correct trials out of n (the unbiased estimator), with a
    scenario-clustered 95% interval.

    Provider-filtered cells are left out (a source with no other cell gives no row); trials
    with no decision count as wrong, as in mean-trial accuracy. A condition with a scored
    cell of fewer than k trials gets no pass^k (``note`` says how many; dropping those cells
    would let pass^k rise with k). pass^1 is the mean over cells of c / n (mean-trial
    accuracy when every cell has the same n) and pass^n is the share of cells with every
    trial correct (pass5).

    The interval is Clopper-Pearson at the scenario-clustered effective size
    (:func:`~analysis.inference._arrays.effective_size_interval`) of the per-scenario sums
    of C(c, k) / C(n, k) over cells: each cell's value lies in [0, 1], so its variance is at
    most that of a mean of floor(n / k) independent Bernoulli draws (its disjoint sets of k
    trials), and the effective size is at most that many per cell. A percentile
    scenario bootstrap, this function's interval before, covered 90-91% for pass^5 on 20
    scenarios with a high intraclass correlation (docs/inference.md).

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``), one or more sources.
    k_max : int, optional
        Largest k; default the largest number of trials in a cell.
    n_boot, seed : int
        Kept so that existing calls run: the interval does not resample.

    Returns
    -------
    DataFrame
        One row per source, condition and k: ``source, condition, k, estimate, ci_low,
        ci_high, n_clusters, n_short, method, note``; NaN bounds with a ``note`` below
        :data:`~analysis.inference._arrays.MIN_CLUSTERS` scenarios, and NaN throughout
        where a cell has fewer than k trials (``n_short`` of them).

    See Also
    --------
    analysis.inference.clustered_accuracy : mean-trial accuracy (pass^1 on equal cells).
    analysis.exploring.rates : pass5 per any grouping (``metric="pass5"``).

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"source": "run", "scenario_id": ["a", "b"],
    ...     "condition": "m (off)", "n_trials": [5, 5], "n_correct": [5, 3],
    ...     "modal_scored": True, "modal_correct": True, "modal_decision": "allowed",
    ...     "required_gate": "allowed", "directionally_scored": True})
    >>> pass_hat_k(cells)[["k", "estimate"]].round(3).to_dict("list")
    {'k': [1, 2, 3, 4, 5], 'estimate': [0.8, 0.65, 0.55, 0.5, 0.5]}
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=30, seed=2)
    >>> out = pass_hat_k(cells)
    >>> columns = ["condition", "k", "estimate", "ci_low", "ci_high"]
    >>> out.loc[out.k.isin([1, 5]), columns].round(3)
           condition  k  estimate  ci_low  ci_high
    0  sim-01 (high)  1     0.613   0.476    0.739
    1   sim-01 (off)  1     0.627   0.460    0.774
    8  sim-01 (high)  5     0.233   0.095    0.432
    9   sim-01 (off)  5     0.333   0.167    0.537
    """
    rows = []
    for source, part in by_source(cells):
        arrays = cell_arrays(part)
        if not arrays.conditions:  # every cell provider-filtered: nothing to estimate
            continue
        top = int(arrays.n_trials.max()) if k_max is None else int(k_max)
        scored = arrays.scored > 0
        for k in range(1, top + 1):
            present = scored & (arrays.n_trials >= k)
            value = np.where(
                present, ratio(comb(arrays.n_correct, k), comb(arrays.n_trials, k)), 0.0
            )
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
                units = (np.floor(arrays.n_trials[j] / k) * present[j]).sum()
                interval = effective_size_row(value[j], present[j], units, method=METHOD)
                rows.append({**row, "estimate": estimate, **interval, "n_short": 0})
    return pd.DataFrame(rows, columns=PASS_K_COLUMNS)
