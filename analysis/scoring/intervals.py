"""Intervals and tests on counts (statsmodels)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint


def wilson_interval(k: int | np.ndarray, n: int | np.ndarray) -> tuple:
    """Wilson score 95% interval for ``k`` successes out of ``n``, as fractions.

    Each bound is clipped to the estimate k / n, so the distance from the estimate to either
    bound is never negative (at 7/7 the upper bound computes as 0.9999999999999999). Where
    n is 0 both bounds are NaN, without a warning.

    Parameters
    ----------
    k : int or ndarray
        Successes.
    n : int or ndarray
        Trials, of the same shape as ``k`` (or broadcastable to it).

    Returns
    -------
    tuple of (float or ndarray, float or ndarray)
        The lower and upper bounds, each of ``k``'s shape.

    See Also
    --------
    rates : Rates with Wilson or scenario-clustered intervals, by any column.
    analysis.inference.clustered_accuracy : Scenario-clustered intervals for accuracy.

    Examples
    --------
    >>> low, high = wilson_interval(7, 10)
    >>> round(float(low), 4), round(float(high), 4)
    (0.3968, 0.8922)

    Many at once, and an empty count:

    >>> import numpy as np
    >>> low, high = wilson_interval(np.array([0, 5, 3]), np.array([10, 10, 0]))
    >>> low.round(4), high.round(4)
    (array([0.    , 0.2366,    nan]), array([0.2775, 0.7634,    nan]))
    """
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # statsmodels' own 0/0 at n = 0
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        estimate = np.divide(k, n)
        return np.minimum(low, estimate), np.maximum(high, estimate)


def difference_interval(k1, n1, k0, n0):
    """95% interval for p1 - p0 from two independent binomial counts (Newcombe's method):
    two floats, or two arrays when the counts are arrays (one interval per element, each
    as the scalar call gives it).

    The published counts are per condition, not per paired trial, so the two proportions
    are treated as independent: the interval ignores the pairing by scenario and the
    clustering of trials within scenarios, and is not known to err on the safe side
    (``analysis.inference`` has the paired, clustered methods).

    >>> difference_interval(30, 50, 20, 50)
    (0.004576018501439599, 0.3752438330311292)
    >>> [b.round(4).tolist() for b in difference_interval([30, 5], [50, 50], [20, 5], [50, 40])]
    [[0.0046, -0.1724], [0.3752, 0.1087]]
    """
    counts = (np.asarray(c) for c in (k1, n1, k0, n0))
    low, high = confint_proportions_2indep(*counts, method="newcomb", compare="diff")
    if np.ndim(low) == 0:
        return float(low), float(high)
    return np.asarray(low, dtype="float64"), np.asarray(high, dtype="float64")


#: Fewer scenarios than this behind a row: no interval (as ``analysis.inference.MIN_CLUSTERS``).
MIN_SCENARIOS = 10
#: The interval :func:`with_wilson` gives (named in ``interval_method``), and its level.
WILSON_ON_COUNTS = "Wilson on {n} (each independent; ignores clustering by scenario)"
LEVEL = 0.95


def with_wilson(
    frame: pd.DataFrame, k: str, n: str, prefix: str, scenarios: str | None = None
) -> pd.DataFrame:
    """``frame`` with ``<prefix>_low`` / ``<prefix>_high`` Wilson bounds for columns k / n
    (:func:`wilson_interval`); an empty denominator gives NaN bounds.

    With ``scenarios`` (the column counting the scenarios behind each row), the rows also
    name the interval (``interval_method``, ``interval_level``), and a row on fewer than
    :data:`MIN_SCENARIOS` scenarios gets NaN bounds and a ``note``: a handful of scenarios
    cannot carry a 95% interval for a population of them, and Wilson's own coverage falls
    below 95% on one to a few cells.

    Examples
    --------
    >>> frame = pd.DataFrame({"k": [3, 30], "n": [4, 40], "s": [4, 40]})
    >>> out = with_wilson(frame, "k", "n", "rate", scenarios="s")
    >>> out.rate_low.round(3).tolist(), out.note.tolist()[0]
    ([nan, 0.598], 'no interval: 4 scenario(s), fewer than 10')
    """
    counts = frame[k].to_numpy(dtype="float64")
    totals = frame[n].to_numpy(dtype="float64")
    empty = totals <= 0
    safe = np.where(empty, 1.0, totals)
    low, high = wilson_interval(np.where(empty, 0.0, counts), safe)
    low = np.where(empty, np.nan, np.asarray(low, dtype="float64"))
    high = np.where(empty, np.nan, np.asarray(high, dtype="float64"))
    if scenarios is None:
        return frame.assign(**{f"{prefix}_low": low, f"{prefix}_high": high})
    n_scenarios = frame[scenarios].to_numpy()
    few = n_scenarios < MIN_SCENARIOS
    method = WILSON_ON_COUNTS.format(n=n.removeprefix("n_"))
    return frame.assign(
        **{
            f"{prefix}_low": np.where(few, np.nan, low),
            f"{prefix}_high": np.where(few, np.nan, high),
        },
        interval_method=np.where(few, "", method),
        interval_level=LEVEL,
        note=[
            f"no interval: {c} scenario(s), fewer than {MIN_SCENARIOS}" if f else ""
            for f, c in zip(few, n_scenarios, strict=True)
        ],
    )
