"""The pooled quantities with scenario-clustered intervals: Table 3's modal accuracy per
construction pattern, the mirror-vs-anchor gap and the headline asymmetry (over- and
under-refusal rates and their ratio), each pooled over conditions, with the interval on
cells (treating every cell as independent) beside it.

A pooled rate is a ratio of per-scenario sums over the conditions, so its interval is the
one ``rates(ci="cluster")`` gives (Clopper-Pearson at the scenario-clustered effective
size, :func:`~analysis.inference._arrays.effective_size_interval`); the gap joins its two
patterns' intervals (disjoint scenarios, so independent) by MOVER. A percentile scenario
bootstrap, these rates' interval before, covered 85-91% on simulated releases with a high
intraclass correlation (docs/inference.md). The rate ratio keeps its scenario bootstrap
(resampled within required gate), which covers on that grid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import confint_proportions_2indep

from analysis.inference._arrays import (
    EFFECTIVE_SIZE_CP,
    MIN_CLUSTERS,
    N_BOOT,
    SEED,
    by_source,
    cell_arrays,
    effective_size_interval,
    effective_size_row,
    guarded_interval,
    mover_difference,
    ratio,
    ratio_interval,
    scenario_weights,
)
from analysis.scoring.breakdowns import ANCHOR, MIRROR
from analysis.scoring.intervals import wilson_interval

#: The scenario bootstrap of the rate ratio (:func:`pooled_direction_asymmetry`).
RATIO_BOOTSTRAP = (
    "scenario-cluster bootstrap (percentile), within required gate; every resample kept "
    "(no under-refusal: +inf), order statistics"
)
#: :func:`pooled_mirror_gap`'s method.
GAP_METHOD = "MOVER difference of the two patterns' " + EFFECTIVE_SIZE_CP


def _pooled(cells: pd.DataFrame, scenarios: pd.DataFrame, column: str):
    """Per source: (source, cell arrays, each scenario's ``column`` label)."""
    meta = scenarios.assign(scenario_id=scenarios["scenario_id"].astype(str)).set_index(
        "scenario_id"
    )
    for source, part in by_source(cells):
        arrays = cell_arrays(part)
        missing = sorted(set(arrays.scenarios) - set(meta.index))
        if missing:
            raise ValueError(f"scenarios table lacks scenario id(s) {missing[:5]}")
        yield source, arrays, meta.loc[arrays.scenarios, column].astype(str).to_numpy()


def pooled_pattern_accuracy(
    cells: pd.DataFrame, scenarios: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """Table 3 clustered: modal accuracy per construction pattern pooled over conditions,
    with a scenario-clustered 95% interval and the Wilson interval on cells beside it.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``), one or more sources.
    scenarios : DataFrame
        The scenario table, with ``scenario_id`` and ``boundary_pattern`` for every scored
        scenario (a missing one is an error).
    n_boot, seed : int
        Kept so that existing calls run: the interval does not resample.

    Returns
    -------
    DataFrame
        One row per source and pattern: ``source, quantity, estimate, ci_low, ci_high,
        method, note, independent_low, independent_high, independent_method, n_cells,
        n_clusters``. ``estimate`` is modal-correct cells over scored cells of the
        pattern's scenarios; ``ci_low, ci_high`` Clopper-Pearson at the scenario-clustered
        effective size (named in ``method``; NaN with a ``note`` on fewer than
        :data:`~analysis.inference._arrays.MIN_CLUSTERS` scenarios);
        ``independent_low, independent_high`` Wilson on cells (Table 3's interval).

    See Also
    --------
    analysis.scoring.breakdowns.pattern_gradient : Table 3 itself.
    pooled_mirror_gap : the anchor-minus-mirror gap of two of these rates.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=2, n_scenarios=120, seed=3)
    >>> out = pooled_pattern_accuracy(cells, scenarios)
    >>> shown = out["quantity"].str.contains("anchor|mirror")
    >>> out.loc[shown, ["quantity", "estimate", "ci_low", "ci_high", "n_clusters"]].round(3)
                                 quantity  estimate  ci_low  ci_high  n_clusters
    4     modal accuracy: incident_mirror     0.536   0.329    0.733          14
    5  modal accuracy: public_harm_anchor     0.806   0.709    0.881          27
    """
    rows = []
    for source, arrays, pattern in _pooled(cells, scenarios, "boundary_pattern"):
        k, n = arrays.modal_correct.sum(0), arrays.scored.sum(0)
        for name in sorted(pd.unique(pattern)):
            member = pattern == name
            kk, nn = k[member].sum(), n[member].sum()
            w_low, w_high = wilson_interval(kk, nn) if nn else (np.nan, np.nan)
            rows.append(
                {
                    "source": source,
                    "quantity": f"modal accuracy: {name}",
                    "estimate": kk / nn if nn else np.nan,
                    **effective_size_row(k * member, n * member),
                    "independent_low": w_low,
                    "independent_high": w_high,
                    "independent_method": "Wilson on cells (independent)",
                    "n_cells": int(nn),
                    "n_clusters": int((member & (n > 0)).sum()),
                }
            )
    return pd.DataFrame(rows)


def pooled_mirror_gap(
    cells: pd.DataFrame, scenarios: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """Anchor minus mirror modal accuracy pooled over conditions, with a scenario-clustered
    95% interval and Newcombe's unpaired interval on cells beside it.

    The interval joins the two patterns' clustered intervals (Clopper-Pearson at each one's
    effective size; their scenarios are disjoint, so independent) by MOVER
    (:func:`~analysis.inference._arrays.mover_difference`: Newcombe's method with those
    intervals in place of Wilson's). Each pattern needs
    :data:`~analysis.inference._arrays.MIN_CLUSTERS` scenarios, or the bounds are NaN.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``), one or more sources.
    scenarios : DataFrame
        The scenario table, with ``scenario_id`` and ``boundary_pattern``.
    n_boot, seed : int
        Kept so that existing calls run: the interval does not resample.

    Returns
    -------
    DataFrame
        One row per source: ``source, quantity, n_cells, n_clusters, method, estimate,
        ci_low, ci_high, note, independent_low, independent_high, independent_method``
        (``estimate`` and the interval in proportion units, anchor minus mirror).

    See Also
    --------
    analysis.scoring.breakdowns.mirror_gap : the published gap.
    pooled_pattern_accuracy : each pattern's rate.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=2, n_scenarios=120, seed=3)
    >>> out = pooled_mirror_gap(cells, scenarios)
    >>> out[["estimate", "ci_low", "ci_high", "n_clusters"]].round(3)
       estimate  ci_low  ci_high  n_clusters
    0      0.27    0.05     0.49          41
    """
    rows = []
    for source, arrays, pattern in _pooled(cells, scenarios, "boundary_pattern"):
        k, n = arrays.modal_correct.sum(0), arrays.scored.sum(0)
        anchor, mirror = pattern == ANCHOR, pattern == MIRROR
        ka, na, km, nm = k[anchor].sum(), n[anchor].sum(), k[mirror].sum(), n[mirror].sum()
        counts = {"anchor": int((anchor & (n > 0)).sum()), "mirror": int((mirror & (n > 0)).sum())}
        row = {
            "source": source,
            "quantity": "mirror-vs-anchor gap (anchor - mirror)",
            "n_cells": int(na + nm),
            "n_clusters": sum(counts.values()),
            "method": GAP_METHOD,
        }
        if na == 0 or nm == 0:
            rows.append({**row, "note": "no scored anchor or mirror cells"})
            continue
        estimate, note = ka / na - km / nm, ""
        low = high = np.nan
        few = {name: m for name, m in counts.items() if m < MIN_CLUSTERS}
        if few:
            note = "no interval: " + ", ".join(f"{m} {name} scenario(s)" for name, m in few.items())
            note += f", fewer than {MIN_CLUSTERS}"
        else:
            first = effective_size_interval(k * anchor, n * anchor)[:2]
            second = effective_size_interval(k * mirror, n * mirror)[:2]
            low, high = mover_difference(ka / na, first, km / nm, second)
        w_low, w_high = confint_proportions_2indep(ka, na, km, nm, method="newcomb")
        rows.append(
            {
                **row,
                "estimate": estimate,
                "ci_low": low,
                "ci_high": high,
                "note": note,
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
    and their ratio, with scenario-clustered 95% intervals and intervals on cells beside
    them (Wilson; for the ratio, the unpaired log interval, which needs both counts
    positive).

    The two rates' intervals are Clopper-Pearson at the scenario-clustered effective size.
    The ratio's is a scenario bootstrap (resampled within required gate) that keeps every
    resample: one with no under-refusal is +inf, so its upper end is unbounded (inf) when
    more than 2.5% have none.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.scoring.rules.score_cells``), one or more sources.
    scenarios : DataFrame
        The scenario table, with ``scenario_id`` and ``required_gate``.
    n_boot, seed : int
        Resamples and seed of the ratio's bootstrap (seed + i for the i-th source).

    Returns
    -------
    DataFrame
        Three rows per source (``quantity``: ``over-refusal rate``, ``under-refusal
        rate``, ``over / under rate ratio``): ``source, quantity, estimate, ci_low,
        ci_high, method, note, independent_low, independent_high, independent_method,
        n_clusters`` (``n_clusters``: the scenarios with an opportunity).

    See Also
    --------
    analysis.exploring.rates : each rate per condition, same interval.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=2, n_scenarios=120, seed=3)
    >>> out = pooled_direction_asymmetry(cells, scenarios)
    >>> out[["quantity", "estimate", "ci_low", "ci_high"]].round(3)
                      quantity  estimate  ci_low  ci_high
    0        over-refusal rate     0.312   0.206    0.436
    1       under-refusal rate     0.358   0.299    0.421
    2  over / under rate ratio     0.873   0.583    1.216
    """
    rows = []
    for offset, (source, arrays, gate) in enumerate(_pooled(cells, scenarios, "required_gate")):
        over, proceed = arrays.over.sum(0), arrays.proceed.sum(0)
        under, hold = arrays.under.sum(0), arrays.hold.sum(0)
        weights = scenario_weights(len(gate), n_boot, seed + offset, strata=gate)
        ko, no, ku, nu = over.sum(), proceed.sum(), under.sum(), hold.sum()
        ratio_estimate = (ko / no) / (ku / nu) if no and nu and ku else np.nan
        low, high = ratio_interval(
            ratio(weights @ over, weights @ proceed), ratio(weights @ under, weights @ hold)
        )
        clusters = int(((proceed > 0) | (hold > 0)).sum())
        ratio_row = guarded_interval(low, high, ratio_estimate, clusters, RATIO_BOOTSTRAP, False)
        if np.isinf(ratio_row["ci_high"]):
            ratio_row["note"] = "upper end unbounded: resamples with no under-refusal"
        # The log interval needs both counts positive (with none over, log 0 is -inf).
        log = (
            confint_proportions_2indep(ko, no, ku, nu, method="log", compare="ratio")
            if ko and ku
            else (np.nan, np.nan)
        )
        quantities = {
            "over-refusal rate": (over, proceed),
            "under-refusal rate": (under, hold),
        }
        for name, (k, n) in quantities.items():
            w_low, w_high = wilson_interval(k.sum(), n.sum()) if n.sum() else (np.nan, np.nan)
            rows.append(
                {
                    "source": source,
                    "quantity": name,
                    "estimate": k.sum() / n.sum() if n.sum() else np.nan,
                    **effective_size_row(k, n),
                    "independent_low": float(w_low),
                    "independent_high": float(w_high),
                    "independent_method": "Wilson on cells (independent)",
                    "n_clusters": int((n > 0).sum()),
                }
            )
        rows.append(
            {
                "source": source,
                "quantity": "over / under rate ratio",
                "estimate": ratio_estimate,
                **ratio_row,
                "independent_low": float(log[0]),
                "independent_high": float(log[1]),
                "independent_method": "log rate-ratio interval on cells (independent)",
                "n_clusters": clusters,
            }
        )
    return pd.DataFrame(rows)
