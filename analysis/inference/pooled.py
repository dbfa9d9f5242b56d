"""The paper's pooled quantities with scenario-clustered intervals: Table 3's modal accuracy
per construction pattern, the mirror-vs-anchor gap and the headline over/under-refusal
asymmetry, each pooled over a source's conditions (a row says what it pools: every
condition of its ``source``), with the release's interval on independent cells beside it.

Estimand (:data:`~analysis.inference._arrays.ESTIMAND`): a population of scenarios like
these, resampled within the corpus's construction pattern (or required gate), whose mix is
fixed by design.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import confint_proportions_2indep

from analysis.inference._arrays import (
    N_BOOT,
    SEED,
    by_source,
    cell_arrays,
    guarded_interval,
    percentile_interval,
    ratio,
    ratio_interval,
    scenario_weights,
)
from analysis.inference.clustered import CLUSTER_BOOTSTRAP, RATIO_RESAMPLES
from analysis.scoring.breakdowns import ANCHOR, MIRROR
from analysis.scoring.intervals import wilson_interval


def _pooled(cells: pd.DataFrame, scenarios: pd.DataFrame, column: str, n_boot: int, seed: int):
    """Per source: (source, cell arrays, each scenario's ``column`` label, scenario weights
    resampled within those labels)."""
    meta = scenarios.assign(scenario_id=scenarios["scenario_id"].astype(str)).set_index(
        "scenario_id"
    )
    for offset, (source, part) in enumerate(by_source(cells)):
        arrays = cell_arrays(part)
        missing = sorted(set(arrays.scenarios) - set(meta.index))
        if missing:
            raise ValueError(f"scenarios table lacks scenario id(s) {missing[:5]}")
        labels = meta.loc[arrays.scenarios, column].astype(str).to_numpy()
        weights = scenario_weights(len(labels), n_boot, seed + offset, strata=labels)
        yield source, arrays, labels, weights


def pooled_pattern_accuracy(
    cells: pd.DataFrame, scenarios: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """Table 3 clustered: modal accuracy per construction pattern pooled over conditions,
    with a scenario-cluster bootstrap (scenarios resampled within their pattern) and the
    release's Wilson interval on cells beside it (``independent_low``, ``independent_high``;
    ``independent_method`` names it).

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.score_cells``); every condition of a source is pooled into
        that source's rows, sources kept apart.
    scenarios : DataFrame
        The scenario table (``analysis.load_scenarios``): ``scenario_id`` and ``boundary_pattern``.
    n_boot, seed : int
        Resamples and seed of the scenario bootstrap.

    Returns
    -------
    DataFrame
        One row per (source, pattern): ``source, quantity, estimate, ci_low, ci_high,
        method, note, independent_low, independent_high, independent_method, n_cells,
        n_clusters``; a pattern on fewer than ``MIN_CLUSTERS`` scenarios gets NaN bounds
        and a ``note``.

    See Also
    --------
    analysis.pattern_gradient : Table 3 itself, per condition and pooled.
    pooled_mirror_gap : The anchor-minus-mirror gap, pooled the same way.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=2, n_scenarios=60, seed=3)
    >>> out = pooled_pattern_accuracy(cells, scenarios)
    >>> out[["quantity", "estimate", "ci_low", "ci_high", "n_clusters"]].round(3).head(2)
                                  quantity  estimate  ci_low  ci_high  n_clusters
    0  modal accuracy: adversarial_control     0.500     NaN      NaN           3
    1  modal accuracy: calibration_control     0.696   0.536    0.839          14
    """
    rows = []
    for source, arrays, pattern, weights in _pooled(
        cells, scenarios, "boundary_pattern", n_boot, seed
    ):
        k, n = arrays.modal_correct.sum(0), arrays.scored.sum(0)
        for name in sorted(pd.unique(pattern)):
            member = pattern == name
            low, high = percentile_interval(ratio(weights @ (k * member), weights @ (n * member)))
            kk, nn = k[member].sum(), n[member].sum()
            w_low, w_high = wilson_interval(kk, nn) if nn else (np.nan, np.nan)
            estimate = kk / nn if nn else np.nan
            clusters = int(member.sum())
            rows.append(
                {
                    "source": source,
                    "quantity": f"modal accuracy: {name}",
                    "estimate": estimate,
                    **guarded_interval(
                        low, high, estimate, clusters, CLUSTER_BOOTSTRAP + ", within pattern"
                    ),
                    "independent_low": w_low,
                    "independent_high": w_high,
                    "independent_method": "Wilson on cells (independent)",
                    "n_cells": int(nn),
                    "n_clusters": clusters,
                }
            )
    return pd.DataFrame(rows)


def pooled_mirror_gap(
    cells: pd.DataFrame, scenarios: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """Anchor minus mirror modal accuracy pooled over conditions, with a scenario-cluster
    bootstrap (resampled within pattern) and Newcombe's unpaired interval on cells beside it.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.score_cells``); every condition of a source is pooled into
        that source's rows, sources kept apart.
    scenarios : DataFrame
        The scenario table (``analysis.load_scenarios``): ``scenario_id`` and ``boundary_pattern``.
    n_boot, seed : int
        Resamples and seed of the scenario bootstrap.

    Returns
    -------
    DataFrame
        One row per source: ``source, quantity, n_cells, n_clusters, method, estimate,
        ci_low, ci_high, note, independent_low, independent_high, independent_method``; a
        source with no scored anchor or mirror cell gets only a ``note``.

    See Also
    --------
    analysis.mirror_gap : The paper's mirror gap per condition.
    pooled_pattern_accuracy : Each pattern's modal accuracy, pooled the same way.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=2, n_scenarios=60, seed=3)
    >>> out = pooled_mirror_gap(cells, scenarios)
    >>> out["quantity"].iloc[0]
    'mirror-vs-anchor gap (anchor - mirror)'
    >>> out[["estimate", "ci_low", "ci_high", "independent_low", "independent_high"]].round(3)
       estimate  ci_low  ci_high  independent_low  independent_high
    0      0.47   0.203    0.736            0.247              0.64
    """
    rows = []
    for source, arrays, pattern, weights in _pooled(
        cells, scenarios, "boundary_pattern", n_boot, seed
    ):
        k, n = arrays.modal_correct.sum(0), arrays.scored.sum(0)
        anchor, mirror = pattern == ANCHOR, pattern == MIRROR
        ka, na, km, nm = k[anchor].sum(), n[anchor].sum(), k[mirror].sum(), n[mirror].sum()
        row = {
            "source": source,
            "quantity": "mirror-vs-anchor gap (anchor - mirror)",
            "n_cells": int(na + nm),
            "n_clusters": int(anchor.sum() + mirror.sum()),
            "method": CLUSTER_BOOTSTRAP + ", within pattern",
        }
        if na == 0 or nm == 0:
            rows.append({**row, "note": "no scored anchor or mirror cells"})
            continue
        replicates = ratio(weights @ (k * anchor), weights @ (n * anchor)) - ratio(
            weights @ (k * mirror), weights @ (n * mirror)
        )
        low, high = percentile_interval(replicates)
        w_low, w_high = confint_proportions_2indep(ka, na, km, nm, method="newcomb")
        estimate = ka / na - km / nm
        interval = guarded_interval(
            low, high, estimate, row["n_clusters"], row["method"], proportion=False
        )
        rows.append(
            {
                **row,
                "estimate": estimate,
                **interval,
                "independent_low": float(w_low),
                "independent_high": float(w_high),
                "independent_method": "Newcombe unpaired on cells (independent)",
            }
        )
    return pd.DataFrame(rows)


def pooled_direction_asymmetry(
    cells: pd.DataFrame, scenarios: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """The headline asymmetry pooled over conditions: over-refusal rate, under-refusal rate
    and their ratio, with a scenario-cluster bootstrap (resampled within required gate) and
    intervals on cells beside them (Wilson; for the ratio, the unpaired log interval, which
    needs both counts positive). The ratio's bootstrap keeps every resample: one with no
    under-refusal is +inf, so its upper end is unbounded (inf) when more than 2.5% have none.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.score_cells``); every condition of a source is pooled into
        that source's rows, sources kept apart.
    scenarios : DataFrame
        The scenario table (``analysis.load_scenarios``): ``scenario_id`` and ``required_gate``.
    n_boot, seed : int
        Resamples and seed of the scenario bootstrap.

    Returns
    -------
    DataFrame
        Three rows per source (over-refusal rate, under-refusal rate, their ratio):
        ``source, quantity, estimate, ci_low, ci_high, method, note, independent_low,
        independent_high, independent_method, n_clusters``.

    See Also
    --------
    analysis.direction_asymmetry : The paper's headline asymmetry per condition.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=2, n_scenarios=60, seed=3)
    >>> out = pooled_direction_asymmetry(cells, scenarios)
    >>> out[["quantity", "estimate", "ci_low", "ci_high"]].round(3)
                      quantity  estimate  ci_low  ci_high
    0        over-refusal rate     0.297   0.156    0.438
    1       under-refusal rate     0.403   0.318    0.489
    2  over / under rate ratio     0.736   0.393    1.156
    """
    rows = []
    pooled = _pooled(cells, scenarios, "required_gate", n_boot, seed)
    for source, arrays, _, weights in pooled:
        over, proceed = arrays.over.sum(0), arrays.proceed.sum(0)
        under, hold = arrays.under.sum(0), arrays.hold.sum(0)
        over_rate = ratio(weights @ over, weights @ proceed)
        under_rate = ratio(weights @ under, weights @ hold)
        bounds = {
            "over-refusal rate": percentile_interval(over_rate),
            "under-refusal rate": percentile_interval(under_rate),
            "over / under rate ratio": ratio_interval(over_rate, under_rate),
        }
        ko, no, ku, nu = over.sum(), proceed.sum(), under.sum(), hold.sum()
        estimates = {
            "over-refusal rate": ko / no if no else np.nan,
            "under-refusal rate": ku / nu if nu else np.nan,
            "over / under rate ratio": (ko / no) / (ku / nu) if no and nu and ku else np.nan,
        }
        beside = {
            "over-refusal rate": wilson_interval(ko, no) if no else (np.nan, np.nan),
            "under-refusal rate": wilson_interval(ku, nu) if nu else (np.nan, np.nan),
            # The log interval needs both counts positive (with none over, log 0 is -inf).
            "over / under rate ratio": confint_proportions_2indep(
                ko, no, ku, nu, method="log", compare="ratio"
            )
            if ko and ku
            else (np.nan, np.nan),
        }
        clusters = {
            "over-refusal rate": int((proceed > 0).sum()),
            "under-refusal rate": int((hold > 0).sum()),
            "over / under rate ratio": int(((proceed > 0) | (hold > 0)).sum()),
        }
        method = CLUSTER_BOOTSTRAP + ", within required gate"
        for name, (low, high) in bounds.items():
            is_ratio = name == "over / under rate ratio"
            interval = guarded_interval(
                low,
                high,
                estimates[name],
                clusters[name],
                method + (RATIO_RESAMPLES if is_ratio else ""),
                proportion=not is_ratio,
            )
            if is_ratio and np.isinf(interval["ci_high"]):
                interval["note"] = "upper end unbounded: resamples with no under-refusal"
            rows.append(
                {
                    "source": source,
                    "quantity": name,
                    "estimate": estimates[name],
                    **interval,
                    "independent_low": float(beside[name][0]),
                    "independent_high": float(beside[name][1]),
                    "independent_method": "log rate-ratio interval on cells (independent)"
                    if is_ratio
                    else "Wilson on cells (independent)",
                    "n_clusters": clusters[name],
                }
            )
    return pd.DataFrame(rows)
