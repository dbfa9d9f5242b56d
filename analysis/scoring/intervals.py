"""Intervals and tests on counts (statsmodels)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint


def wilson_interval(k: int | np.ndarray, n: int | np.ndarray) -> tuple:
    """Wilson score 95% interval for k successes out of n, as fractions (lower, upper).

    Each bound is clipped to the estimate k / n, so the distance from the estimate to either
    bound is never negative (at 7/7 the upper bound computes as 0.9999999999999999). Where
    n is 0 both bounds are NaN, without a warning.

    Examples
    --------
    >>> low, high = wilson_interval(7, 10)
    >>> round(float(low), 4), round(float(high), 4)
    (0.3968, 0.8922)
    """
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # statsmodels' own 0/0 at n = 0
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        estimate = np.divide(k, n)
        return np.minimum(low, estimate), np.maximum(high, estimate)


def difference_interval(k1: int, n1: int, k0: int, n0: int) -> tuple[float, float]:
    """95% interval for p1 - p0 from two independent binomial counts (Newcombe's method).

    The published counts are per condition, not per paired trial, so the two proportions
    are treated as independent: the interval ignores the pairing by scenario and the
    clustering of trials within scenarios, and is not known to err on the safe side
    (``analysis.inference`` has the paired, clustered methods).
    """
    low, high = confint_proportions_2indep(k1, n1, k0, n0, method="newcomb", compare="diff")
    return float(low), float(high)


def with_wilson(frame: pd.DataFrame, k: str, n: str, prefix: str) -> pd.DataFrame:
    """``frame`` with ``<prefix>_low`` / ``<prefix>_high`` Wilson bounds for columns k / n
    (:func:`wilson_interval`); an empty denominator gives NaN bounds."""
    counts = frame[k].to_numpy(dtype="float64")
    totals = frame[n].to_numpy(dtype="float64")
    empty = totals <= 0
    safe = np.where(empty, 1.0, totals)
    low, high = wilson_interval(np.where(empty, 0.0, counts), safe)
    low = np.where(empty, np.nan, np.asarray(low, dtype="float64"))
    high = np.where(empty, np.nan, np.asarray(high, dtype="float64"))
    return frame.assign(**{f"{prefix}_low": low, f"{prefix}_high": high})
