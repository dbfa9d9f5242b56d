"""The difference of two independent proportions: the Miettinen-Nurminen score test and the
interval that inverts it, so that p < alpha exactly when the interval excludes the null.

statsmodels has both (``test_proportions_2indep`` and ``confint_proportions_2indep``,
``method="score"``), but not for every table of counts: with the pinned version, away from a
difference of 0 the test takes a root of the likelihood's cubic that lies outside the
parameter space near a rate of 0 or 1 (0/5 against 0/5 gives p = 0.23 at a difference of
-0.2 and 0.29 at +0.2, which symmetry makes equal; other tables give NaN), and the interval
raises for about a third of the tables of up to 5 trials a side. Here the restricted maximum
likelihood is found by bisection on its concave log-likelihood, which holds on the boundary
too, and the interval's ends by bisection on the statistic; the p-value at 0 is
statsmodels' wherever statsmodels gives one (tests/test_two_proportions.py checks both).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: The method as a table names it.
SCORE_METHOD = (
    "Miettinen-Nurminen score interval of independent proportions (inverts the score test "
    "beside it; trials independent, so ignores pairing and clustering)"
)
SCORE_TEST = "Miettinen-Nurminen two-proportion score test (trials independent)"

_STEPS = 64  # bisection halvings: the bracket is at most 2 wide, so 2 ** -63 at the end


def _restricted_p0(k1, n1, k0, n0, delta):
    """The second rate maximising the likelihood with p1 = p0 + delta (bisection on the
    score, which falls as p0 rises: the log-likelihood is concave)."""
    lo = np.maximum(0.0, -delta)
    hi = np.minimum(1.0, 1.0 - delta)

    def slope(p0):
        p1 = p0 + delta
        with np.errstate(divide="ignore", invalid="ignore"):
            parts = (
                np.where(k1 > 0, k1 / p1, 0.0)
                - np.where(n1 - k1 > 0, (n1 - k1) / (1 - p1), 0.0)
                + np.where(k0 > 0, k0 / p0, 0.0)
                - np.where(n0 - k0 > 0, (n0 - k0) / (1 - p0), 0.0)
            )
        return np.nan_to_num(parts, nan=0.0, posinf=np.inf, neginf=-np.inf)

    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        rising = slope(mid) > 0
        lo, hi = np.where(rising, mid, lo), np.where(rising, hi, mid)
    return (lo + hi) / 2


def score_statistic(k1, n1, k0, n0, delta=0.0, correction: bool = True) -> np.ndarray:
    """The score statistic of p1 - p0 = ``delta``: (k1/n1 - k0/n0 - delta) over its standard
    error at the restricted maximum likelihood, times sqrt((N - 1) / N) with
    ``correction`` (Miettinen and Nurminen's; N = n1 + n0). 0 where the numerator is 0.

    Examples
    --------
    >>> round(float(score_statistic(30, 50, 20, 50)), 4)
    1.99
    """
    k1, n1, k0, n0, delta = np.broadcast_arrays(
        *(np.asarray(v, dtype="float64") for v in (k1, n1, k0, n0, delta))
    )
    p0 = _restricted_p0(k1, n1, k0, n0, delta)
    p1 = np.clip(p0 + delta, 0.0, 1.0)
    variance = p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0
    if correction:
        variance = variance * (n1 + n0) / (n1 + n0 - 1)
    numerator = k1 / n1 - k0 / n0 - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = numerator / np.sqrt(variance)
        unbounded = np.sign(numerator) * np.inf
    return np.where(numerator == 0, 0.0, np.where(variance > 0, z, unbounded))


def _counts(k1, n1, k0, n0) -> list[np.ndarray]:
    """The counts as float arrays of one shape, refused unless 0 <= k <= n and n > 0."""
    k1, n1, k0, n0 = np.broadcast_arrays(
        *(np.asarray(v, dtype="float64") for v in (k1, n1, k0, n0))
    )
    if (n1 <= 0).any() or (n0 <= 0).any():
        raise ValueError("n1 and n0 must be positive")
    if ((k1 < 0) | (k1 > n1) | (k0 < 0) | (k0 > n0)).any():
        raise ValueError("k1 and k0 must lie between 0 and their n")
    return [k1, n1, k0, n0]


def _p_of_no_difference(k1, n1, k0, n0, correction: bool) -> np.ndarray:
    return 2 * stats.norm.sf(np.abs(score_statistic(k1, n1, k0, n0, 0.0, correction)))


def score_test(k1, n1, k0, n0, correction: bool = True) -> np.ndarray:
    """The two-sided p of no difference between two independent proportions, k1 of n1
    against k0 of n0: :func:`score_difference`'s p, without its interval (one root-finding
    instead of 129, for a reader who asks only whether two rates differ).

    Parameters
    ----------
    k1, n1, k0, n0 : array-like
        Successes and trials of each group (n1, n0 > 0); need not be whole.
    correction : bool
        Miettinen and Nurminen's variance factor N / (N - 1) (statsmodels' default).

    Returns
    -------
    ndarray or float
        The p-values, shaped as the broadcast counts (a float for scalar counts).

    See Also
    --------
    score_difference : the same p with the interval that inverts the test.

    Examples
    --------
    >>> round(float(score_test(30, 50, 20, 50)), 4)
    0.0466
    >>> [round(float(p), 4) for p in score_test([30, 25], 50, 20, 50)]
    [0.0466, 0.3173]
    """
    return _p_of_no_difference(*_counts(k1, n1, k0, n0), correction)[()]


def score_difference(
    k1, n1, k0, n0, alpha: float = 0.05, correction: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p, low, high)`` for p1 - p0 from k1 of n1 against k0 of n0, trials independent:
    the two-sided score test of no difference and the interval of every difference it does
    not reject at ``alpha``, so ``p < alpha`` exactly when the interval excludes 0.

    Works elementwise on arrays; counts need not be whole (an effective sample size).

    Parameters
    ----------
    k1, n1, k0, n0 : array-like
        Successes and trials of each group (n1, n0 > 0).
    alpha : float
        The test's level; the interval has coverage 1 - alpha.
    correction : bool
        Miettinen and Nurminen's variance factor N / (N - 1) (statsmodels' default).

    Returns
    -------
    p, low, high : ndarray or float
        The two-sided p of no difference and the interval's bounds for p1 - p0, shaped as
        the broadcast counts (floats for scalar counts).

    See Also
    --------
    score_statistic : the statistic the test and the interval share.
    score_test : the p alone.
    analysis.inference.unpaired_reasoning : this on counts divided by their design effects.

    Examples
    --------
    Effective counts need not be whole: 150 of 250 trials against 100 of 250, each at a design
    effect of 5, are 30 of 50 against 20 of 50:

    >>> p, low, high = score_difference(30, 50, 20, 50)
    >>> round(float(p), 4), round(float(low), 4), round(float(high), 4)
    (0.0466, 0.003, 0.382)
    >>> p, low, high = score_difference(0, 5, 0, 5)
    >>> float(p), bool(low < 0 < high)
    (1.0, True)
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    k1, n1, k0, n0 = _counts(k1, n1, k0, n0)
    critical = stats.norm.isf(alpha / 2)
    p = _p_of_no_difference(k1, n1, k0, n0, correction)
    # both ends found in one bisection over the counts twice over (low ends, then high):
    # each element's steps are its own, so the bounds are those of one end at a time
    counts = [np.concatenate([v.ravel(), v.ravel()]) for v in (k1, n1, k0, n0)]
    estimate = counts[0] / counts[1] - counts[2] / counts[3]
    # |z| rises from 0 at the estimate towards -1 and 1: keep ``inside`` where the test does
    # not reject, so the interval never narrows past the crossing
    inside = estimate.copy()
    out = np.repeat([-1.0, 1.0], k1.size)
    for _ in range(_STEPS):
        mid = (inside + out) / 2
        rejects = np.abs(score_statistic(*counts, mid, correction)) > critical
        inside, out = np.where(rejects, inside, mid), np.where(rejects, mid, out)
    ends = np.where(np.abs(score_statistic(*counts, out, correction)) > critical, inside, out)
    low, high = (end.reshape(k1.shape) for end in np.split(ends, 2))
    return p[()], low[()], high[()]
