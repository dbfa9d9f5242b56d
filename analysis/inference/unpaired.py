"""Reasoning floor against high without pairing: from each condition's counts, with the
clustering of trials within scenarios accounted for.

Mean-trial accuracy counts m trials per scenario, and the trials of one scenario move together
(a cell's trials share its scenario and the cell itself). A two-proportion test on the trial
counts treats them as independent: on simulated releases its type-I error reached 29% at an
intraclass correlation of 0.75 (docs/inference.md). Here each condition's counts are first
divided by its design effect (Rao and Scott's adjustment), and the Miettinen-Nurminen score
test and the interval inverting it (:func:`.two_proportions.score_difference`) run on those
effective counts, so p < alpha exactly when the interval excludes 0:

- with per-trial verdicts (``cells``), the design effect is estimated from them: the
  scenario-clustered effective size of :func:`._arrays.effective_size_interval` (the rate's
  binomial over its linearised clustered variance, shrunk by (z / t_df)^2 at Satterthwaite's
  df, never below each scenario counted once), as ``rates(ci="cluster")`` uses it;
- from counts alone, the design effect cannot be estimated, only bounded: each scenario is
  counted once (a cell's accuracy lies in [0, 1], so its variance is at most p (1 - p): the
  largest design effect a rate can have, m), which holds whatever the clustering.

Both need :data:`._arrays.MIN_CLUSTERS` scenarios a condition; fewer gives NaN bounds and a
note. Over-refusal counts one modal outcome per proceed scenario, so its counts are already
one per scenario and enter as they are. Neither adjusts for the pairing by scenario: with the
settings positively correlated on a scenario, as measured releases are, ignoring it widens the
interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inference._arrays import MIN_CLUSTERS, effective_size_interval
from analysis.inference.paired import _frame
from analysis.inference.two_proportions import score_difference
from analysis.scoring.metrics import reasoning_contrasts

#: The methods a row names: from per-trial verdicts, from counts alone, per scenario.
FROM_VERDICTS = (
    "Miettinen-Nurminen score interval at each condition's scenario-clustered effective "
    "size (Rao-Scott: counts over the design effect estimated from per-trial verdicts, "
    "Satterthwaite df; inverts the score test beside it; ignores pairing)"
)
FROM_COUNTS = (
    "Miettinen-Nurminen score interval with each scenario counted once (the largest design "
    "effect: counts cannot estimate the clustering; inverts the score test beside it; "
    "ignores pairing)"
)
PER_SCENARIO = (
    "Miettinen-Nurminen score interval on one modal outcome per scenario (scenarios "
    "independent; inverts the score test beside it; ignores pairing)"
)
SCORE_TEST = "Miettinen-Nurminen two-proportion score test on the interval's effective counts"
_METRICS = (
    ("mean_trial_accuracy", "n_trials_correct", "n_trials"),
    ("over_refusal", "n_over_refusals", "n_proceed_opportunities"),
)


def _verdict_sizes(cells: pd.DataFrame | None) -> dict[tuple[str, str], float]:
    """Per (model, reasoning) in ``cells``: the effective size of its mean-trial accuracy
    (NaN below MIN_CLUSTERS scenarios)."""
    if cells is None or cells.empty:
        return {}
    keep = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    sizes = {}
    for (model, reasoning), part in keep.groupby(["model", "reasoning"], observed=True):
        per = part.groupby(part["scenario_id"].astype(str), observed=True)[
            ["n_correct", "n_trials"]
        ].sum()
        _, _, size = effective_size_interval(per["n_correct"], per["n_trials"])
        sizes[(str(model), str(reasoning))] = size
    return sizes


def unpaired_reasoning(
    conditions: pd.DataFrame, cells: pd.DataFrame | None = None, alpha: float = 0.05
) -> pd.DataFrame:
    """High minus floor per model from each condition's counts, clustering accounted for
    (module docstring): the Miettinen-Nurminen score test and the interval inverting it
    (``p < alpha`` exactly when the interval excludes 0) on counts divided by each
    condition's design effect; pairing by scenario ignored.

    Parameters
    ----------
    conditions : DataFrame
        Condition counts with ``model, reasoning, reasoning_level`` and ``n_trials_correct,
        n_trials, n_over_refusals, n_proceed_opportunities, n_cells``
        (``analysis.scoring.leaderboard``, or ``condition_scores`` with ``reasoning_level``).
    cells : DataFrame, optional
        Scored cells of those conditions (``model, reasoning, scenario_id, n_correct,
        n_trials, modal_scored``): the design effect of mean-trial accuracy is then estimated
        from the per-trial verdicts. Without them (published counts), each scenario is
        counted once.
    alpha : float
        The test's level; the interval has coverage 1 - alpha.

    Returns
    -------
    DataFrame
        One row per (model, metric) for mean-trial accuracy and over-refusal: ``source,
        contrast, metric, estimate, ci_low, ci_high, p, test, method, n_clusters,
        n_unpaired, pairing, ..., model, n_effective_high, n_effective_floor, note``
        (``n_effective_*``: the sample sizes the test ran at; ``n_clusters``: the fewer
        scenarios of the two conditions). NaN bounds and p, with a note, where a condition
        has fewer than ``MIN_CLUSTERS`` scenarios.

    See Also
    --------
    analysis.inference.two_proportions.score_difference : the test and interval on counts.
    paired_accuracy_difference : the same contrast paired by scenario, from verdicts.

    Examples
    --------
    Twenty scenarios of five trials a condition; from counts alone each scenario counts
    once (20 a side), so a 20-point gain in accuracy is not told apart from 0:

    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"model": ["m", "m"], "reasoning": ["off", "high"],
    ...     "reasoning_level": ["floor", "high"], "n_trials_correct": [50, 70],
    ...     "n_trials": [100, 100], "n_over_refusals": [5, 5],
    ...     "n_proceed_opportunities": [10, 10], "n_modal_correct": [10, 14], "n_cells": [20, 20],
    ...     "n_under_refusals": [1, 1], "n_hold_opportunities": [10, 10]})
    >>> out = unpaired_reasoning(conditions)
    >>> out["metric"].tolist(), out["estimate"].round(2).tolist()
    (['mean_trial_accuracy', 'over_refusal'], [0.2, 0.0])
    >>> out[["p", "ci_low", "ci_high", "n_effective_high"]].round(4).values.tolist()
    [[0.2024, -0.1065, 0.4726, 20.0], [1.0, -0.4101, 0.4101, 10.0]]
    """
    sizes = _verdict_sizes(cells)
    rows, counts = [], []
    for r in reasoning_contrasts(conditions).itertuples(index=False):
        arms = {"high": r.reasoning_high, "floor": r.reasoning_floor}
        scenarios = min(int(r.n_cells_high), int(r.n_cells_floor))
        for metric, k, n in _METRICS:
            row = {
                "source": "published" if cells is None else "counts and verdicts",
                "contrast": f"{r.model}: {r.reasoning_high} - {r.reasoning_floor}",
                "model": r.model,
                "metric": metric,
                "estimate": getattr(r, f"{metric}_diff"),
                "ci_low": np.nan,
                "ci_high": np.nan,
                "p": np.nan,
                "test": SCORE_TEST,
                "method": PER_SCENARIO,
                "n_clusters": scenarios,
                "n_unpaired": np.nan,
                "pairing": "unpaired: each condition's counts alone",
                "note": "",
            }
            effective = {}
            for arm, reasoning in arms.items():
                total = float(getattr(r, f"{n}_{arm}"))
                size = total
                if metric == "mean_trial_accuracy":
                    if cells is not None:
                        size = sizes.get((str(r.model), str(reasoning)), np.nan)
                        row["method"] = FROM_VERDICTS
                    else:
                        size = float(getattr(r, f"n_cells_{arm}"))
                        row["method"] = FROM_COUNTS
                rate = float(getattr(r, f"{k}_{arm}")) / total if total else np.nan
                effective[arm] = (rate * size, size)
            row.update(
                n_effective_high=effective["high"][1], n_effective_floor=effective["floor"][1]
            )
            if metric == "mean_trial_accuracy" and scenarios < MIN_CLUSTERS:
                row["note"] = (
                    f"no test: {scenarios} scenario(s), fewer than {MIN_CLUSTERS}, cannot "
                    "bound or estimate the clustering"
                )
            elif not np.isfinite([*effective["high"], *effective["floor"]]).all() or not (
                effective["high"][1] > 0 and effective["floor"][1] > 0
            ):
                row["note"] = "no test: a condition without per-trial verdicts or counts"
            else:
                counts.append((len(rows), *effective["high"], *effective["floor"]))
            rows.append(row)
    if counts:  # every contrast in one vectorised call
        at, k1, n1, k0, n0 = np.asarray(counts, dtype="float64").T
        p, low, high = (np.atleast_1d(v) for v in score_difference(k1, n1, k0, n0, alpha))
        for i, index in enumerate(at.astype(int)):
            rows[index].update(p=float(p[i]), ci_low=float(low[i]), ci_high=float(high[i]))
    return _frame(rows)
