"""Rank sets from bootstrap replicates of each condition's estimate: which pairwise
differences studentised max-T intervals separate, stepped down as Romano and Wolf's
procedure does (:func:`simultaneous_rank_sets`), and P(first) (:func:`first_place_shares`).
:mod:`analysis.inference.ranks` draws the replicates and says what they assume.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Elements of one (replicates x conditions x conditions) block of ``|t|`` values (8 MB:
#: the in-place passes over it stay in cache).
_BLOCK = 1_000_000


def first_place_shares(replicates: np.ndarray) -> np.ndarray:
    """P(first) per condition from (replicates, conditions) estimates: in each replicate the
    conditions tied for the highest share first place equally, so the shares sum to 1 (NaN
    counts as lowest).

    >>> first_place_shares(np.array([[0.9, 0.9, 0.1], [0.9, 0.5, 0.1]])).tolist()
    [0.75, 0.25, 0.0]
    """
    values = np.nan_to_num(np.asarray(replicates, dtype="float64"), nan=-np.inf)
    first = values == values.max(axis=1, keepdims=True)
    return (first / first.sum(axis=1, keepdims=True)).mean(axis=0)


@dataclass(frozen=True)
class _Maxima:
    """Per bootstrap replicate and row of a rank-set computation, the largest |t| over the
    ``active`` pairs (``per_row``) and the column where it is (``where``)."""

    active: np.ndarray
    per_row: np.ndarray
    where: np.ndarray

    @property
    def overall(self) -> np.ndarray:
        """Per replicate, the largest |t| over every active pair."""
        return self.per_row.max(axis=1)


def simultaneous_rank_sets(
    estimate: np.ndarray,
    replicates: np.ndarray,
    level: float = 0.95,
    n_clusters: int | None = None,
    leading: int | None = None,
) -> dict[str, np.ndarray | float]:
    """Marginal and simultaneous rank sets from bootstrap replicates of each condition's
    estimate (higher is better), by which pairwise differences their studentised
    max-T intervals separate, stepped down (see the module's docstring).

    Parameters
    ----------
    estimate : ndarray, shape (conditions,)
        Each condition's estimate, higher ranking better.
    replicates : ndarray, shape (replicates, conditions)
        Bootstrap replicates of ``estimate`` (one resample shared by every condition where
        they are paired). NaN replicates count as no deviation.
    level : float
        The sets' confidence level, marginal and simultaneous.
    n_clusters : int, optional
        Resampled clusters: bootstrap standard errors are multiplied by sqrt(n / (n - 1)),
        the bootstrap's small-sample shortfall.
    leading : int, optional
        Give sets to the ``leading`` conditions of highest estimate only, from the pairs
        that involve one of them (each of their sets then compares it with every
        condition; the simultaneous sets hold for those conditions together), so the work
        grows with ``leading`` times the conditions, not their square. The others get no
        set (NaN). Default: every condition.

    Returns
    -------
    dict
        ``low, high`` (marginal), ``low_joint, high_joint`` (simultaneous) integer arrays
        (float, NaN outside the ``leading`` conditions when they are not all),
        ``t_critical_joint`` and ``t_critical`` (per condition): the first step's critical
        values (NaN with a single condition).

    See Also
    --------
    rank_uncertainty : Rank sets from a scenario bootstrap of per-trial verdicts.
    rank_uncertainty_from_counts : Rank sets from published counts.

    Examples
    --------
    Three conditions, the first two 0.02 apart with bootstrap spread 0.01 each, the third
    far below: the first two cannot be ordered, the third is last.

    >>> rng = np.random.default_rng(0)
    >>> estimate = np.array([0.80, 0.78, 0.50])
    >>> replicates = estimate + 0.01 * rng.standard_normal((4000, 3))
    >>> sets = simultaneous_rank_sets(estimate, replicates)
    >>> sets["low_joint"].tolist(), sets["high_joint"].tolist()
    ([1, 1, 3], [2, 2, 3])
    """
    estimate = np.asarray(estimate, dtype="float64")
    replicates = np.asarray(replicates, dtype="float64")
    if replicates.ndim != 2 or replicates.shape[1] != len(estimate):
        raise ValueError(
            f"replicates must be (replicates, {len(estimate)} conditions), got {replicates.shape}"
        )
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    n = len(estimate)
    known = np.isfinite(estimate)
    rows = np.arange(n)
    if leading is not None and 0 < leading < n:
        order = np.argsort(-np.nan_to_num(estimate, nan=-np.inf), kind="stable")
        rows = np.sort(order[:leading])
    deviation = np.where(np.isfinite(replicates), replicates - np.nan_to_num(estimate), 0.0)
    deviation[:, ~known] = 0.0
    centred = deviation - deviation.mean(axis=0)
    var = (centred**2).sum(axis=0) / max(len(centred) - 1, 1)
    cov = centred[:, rows].T @ centred / max(len(centred) - 1, 1)  # (rows, conditions)
    variance = var[rows][:, None] + var[None, :] - 2 * cov
    se = np.sqrt(np.clip(variance, 0.0, None))
    spread = se > 0
    safe = np.where(spread, se, 1.0)
    if n_clusters is not None and n_clusters > 1:
        inflate = np.sqrt(n_clusters / (n_clusters - 1))
    else:
        inflate = 1.0
    value = np.nan_to_num(estimate)
    gap = value[rows][:, None] - value[None, :]
    pairs = known[rows][:, None] & known[None, :] & (rows[:, None] != np.arange(n)[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(spread, gap / (safe * inflate), np.sign(gap) * np.inf)
    z = np.where(pairs, z, 0.0)  # z[r, j] > c: condition rows[r] is above j

    def largest(active: np.ndarray, before: _Maxima | None = None) -> _Maxima:
        """Per replicate and row, the largest bootstrap |t| over the ``active`` pairs, and
        the column where it is (blocks of replicates, each computed in one reused buffer;
        only the columns with an active pair are visited). A pair left out is divided by an
        infinite scale: its |t| is 0, as small as any. ``before``: the maxima of a set of
        pairs that holds ``active``; a replicate keeps them where every row's largest pair
        is still active (the largest over fewer pairs that still hold it is the same value),
        and only the others are computed again."""
        n_boot = len(deviation)
        if before is None:
            per_row = np.zeros((n_boot, len(rows)))
            where = np.zeros((n_boot, len(rows)), dtype=np.intp)
            redo = np.arange(n_boot)
        else:
            per_row, where = before.per_row.copy(), before.where.copy()
            dropped = before.active & ~active
            redo = np.flatnonzero(dropped[np.arange(len(rows)), where].any(axis=1))
        mask = active & spread
        columns = np.flatnonzero(mask.any(axis=0))
        if not len(columns):
            return _Maxima(active.copy(), np.zeros((n_boot, len(rows))), where)
        scale = np.where(mask[:, columns], safe[:, columns], np.inf)
        of_rows = deviation[np.ix_(redo, rows)]
        of_columns = deviation[np.ix_(redo, columns)]
        step = max(1, _BLOCK // (len(rows) * len(columns)))
        buffer = np.empty((min(step, len(redo)), len(rows), len(columns)))
        for start in range(0, len(redo), step):
            stop = min(start + step, len(redo))
            t = buffer[: stop - start]
            np.subtract(of_rows[start:stop, :, None], of_columns[start:stop, None, :], out=t)
            np.abs(t, out=t)
            np.divide(t, scale, out=t)
            at = t.argmax(axis=2)
            per_row[redo[start:stop]] = np.take_along_axis(t, at[:, :, None], axis=2)[:, :, 0]
            where[redo[start:stop]] = columns[at]
        return _Maxima(active.copy(), per_row, where)  # the caller's active set changes

    # Step-down (Romano and Wolf): critical values from the pairs not yet separated, until
    # a step separates none; the first step is the single-step max-T critical value. Both
    # step-downs start from every pair: that first pass, the costliest, is made once, and
    # each later step computes again only the replicates whose largest pair it dropped.
    every_pair = largest(pairs)
    active, first_joint, top = pairs.copy(), None, every_pair
    while active.any():
        top = top if first_joint is None else largest(active, top)
        critical_joint = float(np.quantile(top.overall, level, method="higher"))
        first_joint = critical_joint if first_joint is None else first_joint
        newly = active & (np.abs(z) > critical_joint)
        if not newly.any():
            break
        active &= ~newly
    joint = pairs & ~active
    active, first, top = pairs.copy(), None, every_pair
    while active.any():
        top = top if first is None else largest(active, top)
        critical = np.quantile(top.per_row, level, axis=0, method="higher")
        first = critical if first is None else first
        newly = active & (np.abs(z) > critical[:, None])
        if not newly.any():
            break
        active &= ~newly
    marginal = pairs & ~active  # row r: the pairs of its own family separated

    def bounds(separated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        above_i = (separated & (z < 0)).sum(axis=1)  # j separated above rows[r]
        below_i = (separated & (z > 0)).sum(axis=1)
        if len(rows) == n:
            return 1 + above_i, n - below_i
        low, high = np.full(n, np.nan), np.full(n, np.nan)
        low[rows], high[rows] = 1 + above_i, n - below_i
        return low, high

    low_joint, high_joint = bounds(joint)
    low, high = bounds(marginal)
    nan = np.full(n, np.nan)
    return {
        "low": low,
        "high": high,
        "low_joint": low_joint,
        "high_joint": high_joint,
        "t_critical": nan if first is None else _spread(first, rows, n),
        "t_critical_joint": np.nan if first_joint is None else first_joint,
    }


def _spread(values: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, np.nan)
    out[rows] = values
    return out
