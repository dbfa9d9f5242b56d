"""Cells as condition x scenario arrays, seeded scenario-bootstrap weights, and the pieces
every resampling method shares."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.scoring.rules import direction_flags
from analysis.trials.schema import split_condition_label, text_categorical

#: What every clustered interval is about, unless its row says otherwise.
ESTIMAND = (
    "a population of scenarios like these: scenarios are resampled, so the trials of one "
    "scenario move together"
)
#: What an interval treating trials (or cells) as independent is about.
FIXED_SCENARIOS = (
    "these scenarios held fixed, only trial-to-trial noise: an interval that treats trials "
    "(or cells) as independent"
)

#: Default seed and number of bootstrap resamples of every resampling method.
SEED = 20260501
N_BOOT = 4000


@dataclass(frozen=True)
class CellArrays:
    """One source's modal-scored cells as (condition, scenario) arrays; absent cells are 0."""

    conditions: list[str]
    scenarios: list[str]
    n_trials: np.ndarray
    n_correct: np.ndarray
    scored: np.ndarray  # 1 where the cell is modal-scored
    modal_correct: np.ndarray
    decided: np.ndarray  # 1 where the cell has a modal decision
    hold: np.ndarray  # directionally scored, required blocked
    proceed: np.ndarray  # directionally scored, required allowed
    under: np.ndarray  # hold cells with modal allowed
    over: np.ndarray  # proceed cells with modal blocked


def cell_arrays(cells: pd.DataFrame) -> CellArrays:
    """The modal-scored cells of ``cells`` (one source) as :class:`CellArrays`."""
    keep = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    condition, scenario = text_categorical(keep["condition"]), text_categorical(keep["scenario_id"])
    shape = (len(condition.categories), len(scenario.categories))
    rows, cols = condition.codes, scenario.codes

    def fill(values) -> np.ndarray:
        grid = np.zeros(shape)
        grid[rows, cols] = np.asarray(values, dtype="float64")
        return grid

    modal = keep["modal_decision"].astype(object).to_numpy()
    required = keep["required_gate"].astype(object).to_numpy()
    flags = direction_flags(required, modal, keep["directionally_scored"].to_numpy(dtype=bool))
    return CellArrays(
        conditions=[str(c) for c in condition.categories],
        scenarios=[str(s) for s in scenario.categories],
        n_trials=fill(keep["n_trials"]),
        n_correct=fill(keep["n_correct"]),
        scored=fill(np.ones(len(keep))),
        modal_correct=fill(keep["modal_correct"].to_numpy(dtype=bool)),
        decided=fill(~pd.isna(modal)),
        hold=fill(flags["n_hold_opportunities"]),
        proceed=fill(flags["n_proceed_opportunities"]),
        under=fill(flags["n_under_refusals"]),
        over=fill(flags["n_over_refusals"]),
    )


def by_source(cells: pd.DataFrame):
    """``(source, cells of that source)`` pairs, in source order."""
    source = cells["source"].astype(str)
    for name in sorted(source.unique()):
        yield name, cells.loc[(source == name).to_numpy()]


def scenario_weights(
    n_scenarios: int,
    n_boot: int = N_BOOT,
    seed: int | np.random.Generator = SEED,
    strata: np.ndarray | None = None,
) -> np.ndarray:
    """(n_boot, n_scenarios) counts of how often each scenario is drawn in each resample.

    Scenarios are drawn with replacement, ``n_scenarios`` per resample, or, with ``strata``
    (one label per scenario), as many per stratum as it holds. The counts are float64
    (exact), so that ``weights @ values`` runs as one BLAS product: with int64 counts numpy
    multiplies in its own loop, eight times slower.
    """
    rng = np.random.default_rng(seed)
    if strata is None:
        return _draw_counts(rng, n_scenarios, n_boot).astype("float64")
    strata = np.asarray(strata)
    weights = np.zeros((n_boot, n_scenarios), dtype="float64")
    for label in pd.unique(strata):
        members = np.flatnonzero(strata == label)
        weights[:, members] = _draw_counts(rng, len(members), n_boot)
    return weights


def _draw_counts(rng: np.random.Generator, size: int, n_boot: int) -> np.ndarray:
    """(n_boot, size) counts of ``size`` draws with replacement from ``size`` items."""
    draws = rng.integers(0, size, size=(n_boot, size)) + size * np.arange(n_boot)[:, None]
    return np.bincount(draws.ravel(), minlength=n_boot * size).reshape(n_boot, size)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` with NaN where the denominator is 0."""
    numerator = np.asarray(numerator, dtype="float64")
    denominator = np.asarray(denominator, dtype="float64")
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def percentile_interval(replicates: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """2.5th and 97.5th percentiles of bootstrap replicates (NaN replicates ignored; without
    any, the same percentiles come from ``np.percentile``, several times faster)."""
    missing = np.isnan(replicates)
    if not missing.any():
        low, high = np.percentile(replicates, [2.5, 97.5], axis=axis)
        return low, high
    if missing.all():  # NaN bounds shaped as np.percentile's: a scalar for a 1-D input
        shape = np.delete(np.array(replicates.shape), axis)
        empty = np.full(tuple(shape), np.nan)[()]
        return empty, empty
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column: NaN bounds
        low, high = np.nanpercentile(replicates, [2.5, 97.5], axis=axis)
    return low, high


def accuracy_replicates(
    arrays: CellArrays, n_boot: int, seed: int, strata: np.ndarray | None = None
) -> np.ndarray:
    """(n_boot, conditions) mean-trial accuracy of each condition in each scenario
    resample (one set of resamples shared by the conditions, so comparisons stay paired;
    with ``strata``, one label per scenario, resampled within each)."""
    weights = scenario_weights(len(arrays.scenarios), n_boot, seed, strata=strata)
    return ratio(weights @ arrays.n_correct.T, weights @ arrays.n_trials.T)


def pair_rows(arrays: CellArrays, pairs: pd.DataFrame, source: str, rows: list, **labels):
    """For each floor/high pair of ``source``: ``(row, floor index, high index)``, ``row``
    the contrast's labels (``source``, ``contrast`` and ``labels``). A pair one of whose
    conditions has no scored cell is appended to ``rows`` as such and not yielded."""
    index = {c: i for i, c in enumerate(arrays.conditions)}
    for pair in pairs.loc[pairs["source"] == source].itertuples(index=False):
        high, floor = split_condition_label(pair.high)[1], split_condition_label(pair.floor)[1]
        row = {"source": source, "contrast": f"{pair.model}: {high} - {floor}", **labels}
        if pair.floor not in index or pair.high not in index:
            rows.append({**row, "n_clusters": 0, "n_unpaired": 0, "pairing": "no scored cells"})
            continue
        yield row, index[pair.floor], index[pair.high]


#: Fewer scenarios than this: no clustered interval (the row says so, with NaN bounds); a
#: percentile bootstrap over a handful of scenarios cannot hold its 95%.
MIN_CLUSTERS = 10
#: The fallback when a proportion's resamples have no spread (every scenario alike, as at 0
#: or 1): each scenario counted once, the largest design effect a proportion can have.
SCENARIO_WILSON = "Wilson on scenarios (each counted once: the largest design effect)"


def guarded_interval(
    low: float,
    high: float,
    estimate: float,
    n_clusters: int,
    method: str,
    proportion: bool = True,
) -> dict:
    """``ci_low, ci_high, method, note`` for one bootstrap interval, never zero-width.

    Below :data:`MIN_CLUSTERS` scenarios: NaN bounds and a note. A bootstrap without spread
    (``low == high``, as every resample of a rate of 0 or 1 is): for a proportion, the
    Wilson interval with the scenarios as the sample size (:data:`SCENARIO_WILSON`, valid
    whatever the correlation within a scenario, as a scenario's mean lies in [0, 1] and so
    varies at most p(1 - p)); for a difference or ratio, NaN bounds and a note.

    Examples
    --------
    >>> round(guarded_interval(0.0, 0.0, 0.0, 33, "bootstrap")["ci_high"], 3)
    0.104
    >>> guarded_interval(0.2, 0.4, 0.3, 3, "bootstrap")["note"]
    'no interval: 3 scenario(s), fewer than 10'
    """
    from analysis.scoring.intervals import wilson_interval

    nan = {"ci_low": np.nan, "ci_high": np.nan, "method": method}
    if n_clusters < MIN_CLUSTERS:
        return {**nan, "note": f"no interval: {n_clusters} scenario(s), fewer than {MIN_CLUSTERS}"}
    if not np.isfinite(estimate):
        return {**nan, "note": "no estimate"}
    if high > low or (np.isinf(high) and not np.isinf(low)):
        return {"ci_low": float(low), "ci_high": float(high), "method": method, "note": ""}
    if proportion:
        w_low, w_high = wilson_interval(estimate * n_clusters, n_clusters)
        return {
            "ci_low": float(w_low),
            "ci_high": float(w_high),
            "method": SCENARIO_WILSON,
            "note": "bootstrap without spread (every scenario alike)",
        }
    return {**nan, "note": "no interval: every resample gives the same value"}


def ratio_interval(numerator_rate: np.ndarray, denominator_rate: np.ndarray) -> tuple:
    """2.5th and 97.5th percentiles of the resampled ratio of two rates, keeping every
    resample: one with a zero denominator rate is +inf (and the upper end unbounded when more
    than 2.5% are), one with both rates zero is undefined and counts as 0 for the lower end
    and +inf for the upper (so it widens, never narrows). Order statistics, no interpolation
    (``lower`` / ``higher``), as inf cannot be interpolated. NaN rates (an empty resample of
    either) make both ends NaN."""
    top = np.asarray(numerator_rate, dtype="float64")
    bottom = np.asarray(denominator_rate, dtype="float64")
    if np.isnan(top).any() or np.isnan(bottom).any():
        return np.nan, np.nan
    with np.errstate(all="ignore"):
        value = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.inf)
    undefined = (top == 0) & (bottom == 0)
    low = np.percentile(np.where(undefined, 0.0, value), 2.5, method="lower")
    high = np.percentile(np.where(undefined, np.inf, value), 97.5, method="higher")
    return float(low), float(high)


#: :func:`effective_size_interval`'s method, as a row's ``method`` names it.
EFFECTIVE_SIZE_CP = (
    "Clopper-Pearson at the scenario-clustered effective size (Korn-Graubard, Satterthwaite df)"
)


def effective_size_interval(
    k: np.ndarray,
    n: np.ndarray,
    n_units: float | None = None,
    alpha: float = 0.05,
    strata: np.ndarray | None = None,
) -> tuple[float, float, float]:
    """(low, high, effective size) of a ratio of scenario sums ``k.sum() / n.sum()``, by
    Clopper-Pearson at the design-effect-adjusted effective sample size (Korn and
    Graubard, 1998); NaN bounds below :data:`MIN_CLUSTERS` scenarios with ``n > 0``.

    The effective size is the rate's binomial variance over its scenario-clustered
    (linearised, m / (m - 1)) variance, at most ``n_units`` (the independent units the
    sum would be without clustering, default ``n.sum()``: a design effect floored at 1),
    multiplied by (z / t_df)^2 with df the Satterthwaite degrees of freedom of that
    variance (the squared residuals' (sum)^2 / sum of squares, at most m - 1): a rate
    carried by a few scenarios has few degrees of freedom, and so a wide interval. It is
    never below the Kish number of scenarios (each scenario counted once: the largest
    design effect a rate can have) at m - 1 df, which is also the size at a rate of 0 or 1,
    where the data say nothing of the correlation. So no interval has zero width.

    Why not a percentile bootstrap or Wilson at the effective size: on simulated releases
    with beta-distributed scenario rates (0.01 to 0.99, intraclass correlation 0 to 0.75,
    10 to 106 scenarios, 1 to 10 trials) both cover under 94% where the rate is carried by
    a few scenarios (down to 87%); this covers at least 95% on that grid (docs/inference.md).
    statsmodels gives the Clopper-Pearson bounds (at a non-integer count and size); the
    effective size and its degrees of freedom are computed here, as no library gives them
    for a ratio of cluster sums.

    With ``strata`` (one label per scenario, the design's fixed mix, e.g. its construction
    pattern) the variance is the stratified one: residuals centred within each stratum,
    m_h / (m_h - 1) each, at most m - H degrees of freedom (H strata; a stratum of one
    scenario makes the variance the unstratified one, which is larger).

    Examples
    --------
    >>> import numpy as np
    >>> low, high, size = effective_size_interval(np.zeros(12), np.full(12, 5.0))
    >>> round(low, 3), round(high, 3), round(size, 2)
    (0.0, 0.321, 9.52)
    """
    from scipy import special

    k, n = np.asarray(k, dtype="float64"), np.asarray(n, dtype="float64")
    keep = n > 0
    k, n = k[keep], n[keep]
    m = len(n)
    if m < MIN_CLUSTERS:
        return np.nan, np.nan, np.nan
    total = n.sum()
    rate = k.sum() / total
    z = -special.ndtri(alpha / 2)  # scipy.stats.norm.isf(alpha / 2)

    def shrink(df: float) -> float:
        return float((z / -special.stdtrit(df, alpha / 2)) ** 2)  # stats.t.isf(alpha / 2, df)

    residual = k - rate * n
    squares, most = m / (m - 1) * residual**2, m - 1.0
    if strata is not None:
        labels = pd.Series(np.asarray(strata)[keep])
        sizes = labels.map(labels.value_counts()).to_numpy(dtype="float64")
        if (sizes > 1).all() and labels.nunique() > 1:
            centred = residual - pd.Series(residual).groupby(labels).transform("mean").to_numpy()
            squares, most = sizes / (sizes - 1) * centred**2, float(m - labels.nunique())
    size = total**2 / (n**2).sum() * shrink(most)  # each scenario once
    variance = squares.sum() / total**2
    if 0 < rate < 1:
        units = total if n_units is None else float(n_units)
        if variance > 0:
            df = min(most, squares.sum() ** 2 / (squares**2).sum())
            size = max(size, min(rate * (1 - rate) / variance, units) * shrink(df))
        else:  # every scenario at the same rate: no design effect
            size = max(size, units * shrink(most))
    low, high = clopper_pearson(rate * size, size, alpha)
    return float(low), float(high), float(size)


def clopper_pearson(count: float, size: float, alpha: float = 0.05) -> tuple[float, float]:
    """Clopper-Pearson bounds of ``count`` successes in ``size`` trials (both may be
    non-integer), as statsmodels' ``proportion_confint(method="beta")`` gives them: the
    beta quantiles, 0 at no success and 1 at no failure. The quantiles come from
    ``scipy.special`` directly: the same functions ``scipy.stats.beta`` calls, without its
    argument checks, which took a millisecond a call where a build computes thousands.

    Examples
    --------
    >>> [round(v, 4) for v in clopper_pearson(3, 20)]
    [0.0321, 0.3789]
    """
    from scipy import special

    low = special.betaincinv(count, size - count + 1, alpha / 2) if count > 0 else 0.0
    high = special.betainccinv(count + 1, size - count, alpha / 2) if count < size else 1.0
    return float(low), float(high)


#: :func:`effective_size_difference`'s method, as a row's ``method`` names it.
EFFECTIVE_SIZE_DIFFERENCE = (
    "difference of two Clopper-Pearson intervals at each side's scenario-clustered effective "
    "size (Korn-Graubard), combined as Newcombe's square-and-add; unpaired"
)


def effective_size_difference(
    k1: np.ndarray, n1: np.ndarray, k0: np.ndarray, n0: np.ndarray, alpha: float = 0.05
) -> tuple[float, float]:
    """(low, high) of ``k1.sum() / n1.sum() - k0.sum() / n0.sum()``, each side a ratio of
    scenario sums, by Newcombe's square-and-add (MOVER, Zou and Donner 2008) of each side's
    :func:`effective_size_interval`; NaN bounds where either side has none (fewer than
    :data:`MIN_CLUSTERS` scenarios).

    The two sides are taken as independent: on scenarios they share, a positive correlation
    between them only makes the interval wider than it needs to be (a paired method is then
    the narrower valid one).

    Examples
    --------
    Twelve scenarios of five trials each, 80% against 60% correct:

    >>> import numpy as np
    >>> five = np.full(12, 5.0)
    >>> low, high = effective_size_difference(
    ...     np.tile([5.0, 3.0], 6), five, np.tile([4.0, 2.0], 6), five
    ... )
    >>> round(low, 3), round(high, 3)
    (-0.019, 0.391)
    """
    l1, h1, _ = effective_size_interval(k1, n1, alpha=alpha)
    l0, h0, _ = effective_size_interval(k0, n0, alpha=alpha)
    if np.isnan([l1, h1, l0, h0]).any():
        return np.nan, np.nan
    p1 = np.asarray(k1, dtype="float64").sum() / np.asarray(n1, dtype="float64").sum()
    p0 = np.asarray(k0, dtype="float64").sum() / np.asarray(n0, dtype="float64").sum()
    d = p1 - p0
    low = d - np.hypot(p1 - l1, h0 - p0)
    high = d + np.hypot(h1 - p1, p0 - l0)
    return float(max(low, -1.0)), float(min(high, 1.0))


def effective_size_row(
    k: np.ndarray,
    n: np.ndarray,
    n_units: float | None = None,
    strata: np.ndarray | None = None,
    method: str = EFFECTIVE_SIZE_CP,
) -> dict:
    """``ci_low, ci_high, method, note`` of the rate ``k.sum() / n.sum()`` of per-scenario
    sums by :func:`effective_size_interval`: NaN bounds and a note with nothing to count or
    fewer than :data:`MIN_CLUSTERS` scenarios; a note at a rate of 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> row = effective_size_row(np.zeros(12), np.full(12, 5.0))
    >>> round(row["ci_high"], 3), row["note"]
    (0.321, 'rate of 0 or 1: each scenario counted once (the largest design effect)')
    """
    k, n = np.asarray(k, dtype="float64"), np.asarray(n, dtype="float64")
    clusters = int((n > 0).sum())
    nan = {"ci_low": np.nan, "ci_high": np.nan, "method": method}
    if not n.sum():
        return {**nan, "note": "no estimate: nothing to count (n = 0)"}
    if clusters < MIN_CLUSTERS:
        return {**nan, "note": f"no interval: {clusters} scenario(s), fewer than {MIN_CLUSTERS}"}
    low, high, _ = effective_size_interval(k, n, n_units, strata=strata)
    note = ""
    if k.sum() in (0, n.sum()):
        note = "rate of 0 or 1: each scenario counted once (the largest design effect)"
    return {"ci_low": low, "ci_high": high, "method": method, "note": note}


def mover_difference(
    first: float, first_bounds: tuple, second: float, second_bounds: tuple
) -> tuple[float, float]:
    """95% interval of ``first - second`` (two independent estimates) from their own 95%
    intervals, by the method of variance estimates recovered (MOVER; Newcombe's hybrid
    score interval is this with Wilson's intervals; Zou and Donner, 2008).

    Examples
    --------
    >>> tuple(round(v, 3) for v in mover_difference(0.5, (0.4, 0.6), 0.3, (0.2, 0.4)))
    (0.059, 0.341)
    """
    (l1, u1), (l2, u2) = first_bounds, second_bounds
    difference = first - second
    low = difference - np.sqrt((first - l1) ** 2 + (u2 - second) ** 2)
    high = difference + np.sqrt((u1 - first) ** 2 + (second - l2) ** 2)
    return float(low), float(high)
