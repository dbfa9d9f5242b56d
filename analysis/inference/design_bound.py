"""The least clustering a condition's published counts allow: the smallest design effect, and
so the narrowest design-effect-adjusted Wilson interval, of mean-trial accuracy consistent
with them.

A condition publishes, over its S scored cells of m trials each, the correct trials T, the
cells with every trial correct (pass), the modal-correct cells and the cells with no modal
decision. Those counts fix how many cells lie in each band of correct trials per cell, not
where in the band: under upstream's scoring (``modeOf`` in ``src/scorer.mjs``: the mode of
the trials' non-null decisions, ties to the first seen)

- a pass cell has m correct trials;
- another modal-correct cell has at least ceil(m/2) when its trials have no null decision
  (:data:`NO_NULLS`), at least 1 when they may (:data:`NULLS_ALLOWED`), at most m - 1;
- a modal-wrong cell has at most floor(m/2) (a wrong mode needs as many wrong trials);
- a cell with no modal decision has none (every trial null).

ANOVA's ICC of the trials within cells rises with the sum of squared per-cell counts (the
total fixed), so the smallest design effect comes from the histogram that spreads each band's
share of T as evenly as the band allows; :func:`least_clustered_counts` finds it by trying
every split of T between the two bands with free counts.

What is proven, and what is claimed. The design effect 1 + (m - 1) ICC of that histogram is a
lower bound on the design effect of the cells behind the counts (under ``assumption``), so
the Wilson interval at the effective sample size n / DEFF, the band
:func:`design_effect_bound` gives, is no wider than the Wilson interval at the cells' own
design effect (both floored at 1; Wilson's width falls as n grows). The package's
scenario-clustered interval on per-trial verdicts (``rates(ci="cluster")``: Clopper-Pearson
at the Korn-Graubard effective size, :func:`analysis.inference._arrays.effective_size_interval`)
uses an effective size no larger than n / DEFF: its design effect, from the variance of the
scenario means, is at least the ANOVA one, its degrees-of-freedom factor only shrinks it, and
its floor, the number of scenarios, is at most n / DEFF (an ANOVA design effect is at most m).
Clopper-Pearson at a size no larger was at least as wide as the band on every simulated
release of the calibration grid (docs/inference.md) and in the tests. The band is therefore a
floor on the width of a valid clustered 95% interval, computed from counts alone. It is not
itself a 95% interval: where trials cluster it covers the true accuracy less often than 95%.
Nor does it bound every clustered interval (a scenario bootstrap of a spread of the same
counts can be narrower).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from analysis.inference.clustered import anova_icc

NO_NULLS = "no null trial in a cell with a modal decision"
NULLS_ALLOWED = "null trials anywhere upstream's modal rule allows"
#: What the band is (a design-effect-adjusted Wilson interval at the least clustering).
BOUND_METHOD = (
    "least-clustering band: Wilson at n / DEFF, DEFF the smallest design effect the counts "
    "allow; a floor on the width of a clustered 95% interval, not a 95% interval"
)


def _balanced(count: int, total: int) -> tuple[int, int, int]:
    """(q, cells at q + 1, sum of squares) of ``total`` spread over ``count`` cells as evenly
    as whole numbers allow."""
    q, r = divmod(total, count)
    return q, r, (count - r) * q * q + r * (q + 1) ** 2


def least_clustered_counts(
    n_cells: int,
    trials_per_cell: int,
    n_correct: int,
    n_pass: int,
    n_modal_correct: int,
    n_no_decision: int = 0,
    assumption: str = NO_NULLS,
) -> np.ndarray | None:
    """Correct trials per cell of the histogram with the smallest sum of squares (so the
    smallest ANOVA design effect) consistent with a condition's published counts.

    Parameters
    ----------
    n_cells : int
        Scored cells (scenarios) of the condition.
    trials_per_cell : int
        Trials per cell, m.
    n_correct : int
        Correct trials over every cell.
    n_pass : int
        Cells with all m trials correct.
    n_modal_correct : int
        Cells whose modal decision is correct (the pass cells among them).
    n_no_decision : int, default 0
        Cells with no modal decision (every trial null; none correct).
    assumption : str, default :data:`NO_NULLS`
        Where null trials may be: :data:`NO_NULLS` (no null trial in a cell with a modal
        decision, so a modal-correct cell has at least ceil(m / 2) correct trials) or
        :data:`NULLS_ALLOWED` (anywhere upstream's modal rule allows; at least 1).

    Returns
    -------
    numpy.ndarray or None
        The correct trials of each cell, sorted ascending (int64, ``n_cells`` values summing
        to ``n_correct``); None when no histogram fits the counts under ``assumption``.

    Raises
    ------
    ValueError
        For an unknown ``assumption``.

    See Also
    --------
    design_effect_bound : the design effect of this histogram and the band at it.
    analysis.inference.anova_icc : the ICC and design effect of a histogram.

    Examples
    --------
    Four cells of five trials with 12 correct, one cell all correct and two modal-correct:
    the other modal-correct cell holds 3 or 4, the two modal-wrong cells at most 2 each, and
    the evenest split is 2, 2, 3, 5:

    >>> least_clustered_counts(4, 5, 12, 1, 2).tolist()
    [2, 2, 3, 5]

    With 8 correct, the modal-correct cell needs 3 of them and the modal-wrong cells get
    none; with null trials allowed, it may hold a single one, and the spread is evener:

    >>> least_clustered_counts(4, 5, 8, 1, 2).tolist()
    [0, 0, 3, 5]
    >>> least_clustered_counts(4, 5, 8, 1, 2, assumption=NULLS_ALLOWED).tolist()
    [1, 1, 1, 5]
    >>> least_clustered_counts(4, 5, 21, 1, 2) is None  # more correct trials than fit
    True
    """
    m = int(trials_per_cell)
    if assumption not in (NO_NULLS, NULLS_ALLOWED):
        raise ValueError(f"unknown assumption {assumption!r}")
    right_low = math.ceil(m / 2) if assumption == NO_NULLS else 1
    wrong_high = m // 2
    n_right = n_modal_correct - n_pass  # modal-correct cells short of m
    n_wrong = n_cells - n_modal_correct - n_no_decision
    free = n_correct - m * n_pass
    if min(n_right, n_wrong, free, n_no_decision) < 0 or (n_right and right_low > m - 1):
        return None
    best = None
    right_range = range(n_right * right_low, n_right * (m - 1) + 1) if n_right else range(1)
    for right_total in right_range:
        wrong_total = free - right_total
        if not 0 <= wrong_total <= n_wrong * wrong_high or (wrong_total and not n_wrong):
            continue
        squares = 0
        if n_right:
            squares += _balanced(n_right, right_total)[2]
        if n_wrong:
            squares += _balanced(n_wrong, wrong_total)[2]
        if best is None or squares < best[0]:
            best = (squares, right_total, wrong_total)
    if best is None:
        return None
    _, right_total, wrong_total = best
    counts = [m] * n_pass + [0] * n_no_decision
    for count, total in ((n_right, right_total), (n_wrong, wrong_total)):
        if count:
            q, r, _ = _balanced(count, total)
            counts += [q] * (count - r) + [q + 1] * r
    return np.sort(np.array(counts, dtype="int64"))


def design_effect_bound(
    conditions: pd.DataFrame, trials_per_cell: int, assumption: str = NO_NULLS
) -> pd.DataFrame:
    """Per published condition: the smallest design effect of mean-trial accuracy its counts
    allow, and the least-clustering band, Wilson's 95% interval at n / that design effect,
    beside the Wilson interval on trials (which treats them as independent).

    The band is a floor on the width of a valid scenario-clustered 95% interval (the
    module's docstring says what is proven and what was measured), not a 95% interval:
    where trials cluster it covers the true accuracy less often than 95%. For a 95% interval
    use per-trial verdicts (``rates(ci="cluster")``).

    Parameters
    ----------
    conditions : DataFrame
        One row per condition: ``condition`` (or ``label``), ``n_cells, n_trials,
        n_trials_correct, n_pass5, n_modal_correct, n_hold_opportunities,
        n_proceed_opportunities`` (a leaderboard's counts).
    trials_per_cell : int
        Trials per cell, m (the same for every condition).
    assumption : str, default :data:`NO_NULLS`
        Where null trials may be: :data:`NO_NULLS` or :data:`NULLS_ALLOWED` (weaker, so a
        smaller design effect and a narrower band; Table 2 uses it).

    Returns
    -------
    DataFrame
        One row per condition, in order: ``condition, estimate`` (mean trial accuracy),
        ``design_effect_min, icc_min`` (of :func:`least_clustered_counts`' histogram),
        ``n_effective`` (n / the design effect, floored at 1), ``ci_low, ci_high`` (the
        band), ``wilson_low, wilson_high`` (Wilson on trials), ``method`` (what the band
        is: :data:`BOUND_METHOD`), ``assumption`` and ``note`` (why a row has no band: no
        histogram fits the counts, one cell, or every trial alike).

    See Also
    --------
    least_clustered_counts : the histogram behind the design effect.
    analysis.exploring.rate_table.rates : with ``ci="cluster"``, a 95% interval from per-trial
        verdicts.

    Examples
    --------
    Four cells of five trials, 12 correct, one cell all correct, two modal-correct: the
    evenest histogram the counts allow is 2, 2, 3, 5 correct trials, a design effect of 20/13
    (ICC 7/52), so 20 trials count as 13 and the band is wider than Wilson's on trials:

    >>> import pandas as pd
    >>> condition = pd.DataFrame({"condition": ["a"], "n_cells": [4], "n_trials": [20],
    ...     "n_trials_correct": [12], "n_pass5": [1], "n_modal_correct": [2],
    ...     "n_hold_opportunities": [2], "n_proceed_opportunities": [2]})
    >>> row = design_effect_bound(condition, trials_per_cell=5).iloc[0]
    >>> round(float(row["design_effect_min"]), 4), round(float(row["n_effective"]), 6)
    (1.5385, 13.0)
    >>> [round(float(row[c]), 3) for c in ("ci_low", "ci_high", "wilson_low", "wilson_high")]
    [0.342, 0.812, 0.387, 0.781]
    >>> row["method"].startswith("least-clustering band")
    True
    """
    name = "label" if "label" in conditions.columns else "condition"
    rows = []
    wilson: list[tuple[int, int, int]] = []  # (row, k, n): Wilson on trials
    bands: list[tuple[int, float, float]] = []  # (row, k / n, n_effective): the band
    for row in conditions.to_dict("records"):
        cells, n, k = int(row["n_cells"]), int(row["n_trials"]), int(row["n_trials_correct"])
        decided = int(row["n_hold_opportunities"]) + int(row["n_proceed_opportunities"])
        base = {
            "condition": row[name],
            "estimate": k / n if n else np.nan,
            "method": BOUND_METHOD,
            "assumption": assumption,
            "note": "",
        }
        if n:
            wilson.append((len(rows), k, n))
        counts = least_clustered_counts(
            cells,
            trials_per_cell,
            k,
            int(row["n_pass5"]),
            int(row["n_modal_correct"]),
            cells - decided,
            assumption,
        )
        if counts is None:
            rows.append({**base, "note": f"no per-cell histogram fits the counts ({assumption})"})
            continue
        icc, deff = anova_icc(counts, np.full(len(counts), trials_per_cell))
        if not np.isfinite(deff):  # every trial alike, or one cell: no spread to bound
            rows.append({**base, "note": "no bound: every trial alike or fewer than two cells"})
            continue
        effective = n / max(deff, 1.0)  # a design effect below 1 is not used to narrow
        bands.append((len(rows), k / n, effective))
        rows.append({**base, "design_effect_min": deff, "icc_min": icc, "n_effective": effective})
    # Every interval in one call each: statsmodels gives elementwise what it gives one by one.
    if wilson:
        at, k, n = map(np.array, zip(*wilson, strict=True))
        low, high = proportion_confint(k, n, method="wilson")
        for index, lo, hi in zip(at, low, high, strict=True):
            rows[index].update(wilson_low=float(lo), wilson_high=float(hi))
    if bands:
        at, share, effective = map(np.array, zip(*bands, strict=True))
        low, high = proportion_confint(share * effective, effective, method="wilson")
        for index, rate, lo, hi in zip(at, share, low, high, strict=True):
            rows[index].update(ci_low=float(min(lo, rate)), ci_high=float(max(hi, rate)))
    columns = [
        "condition",
        "estimate",
        "design_effect_min",
        "icc_min",
        "n_effective",
        "ci_low",
        "ci_high",
        "wilson_low",
        "wilson_high",
        "method",
        "assumption",
        "note",
    ]
    return pd.DataFrame(rows).reindex(columns=columns)
