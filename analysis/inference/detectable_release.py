"""A release's own design, for :mod:`analysis.inference.detectable`: its scenarios, trials
per cell, intraclass correlation, discordance, the leader's accuracy and the better
degenerate gate's, each estimated from the release where it can be and said where it cannot;
and the gaps between Table 2's adjacent ranks beside what the design detects.

From per-trial verdicts of the published conditions (``source == "published"``) the ICC is
the median over conditions of the ANOVA ICC of their trials
(:func:`analysis.inference.clustered.anova_icc`) and the discordance the median over
reasoning pairs of the observed share of discordant scenarios
(:func:`analysis.inference.paired.paired_binary_difference`). From counts alone the ICC is
the median of the smallest each condition's counts allow
(:func:`analysis.inference.design_bound.design_effect_bound`), so a detectable difference
built on it is a lower bound; the discordance is that of floor and high outcomes independent
across scenarios, p_f (1 - p_h) + p_h (1 - p_f), the largest that gives pairing no gain.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd

from analysis.inference.clustered import anova_icc
from analysis.inference.design_bound import design_effect_bound
from analysis.inference.detectable import (
    ALPHA,
    POWER,
    UNPAIRED,
    fewest,
    unpaired_mdds,
)
from analysis.scoring.ranking import rank_conditions, trials_per_cell

#: The design's fields, as :func:`analysis.inference.detectable.detectable_effect` takes them.
DESIGN_FIELDS = ("n_scenarios", "trials_per_cell", "icc", "discordance", "rate", "gate_rate")


def _inside(rate: float, n: float) -> float:
    """``rate`` moved half a count inside (0, 1) (a design's rate cannot be 0 or 1)."""
    half = 0.5 / max(n, 1.0)
    return float(min(max(rate, half), 1 - half))


def _name(conditions: pd.DataFrame) -> str:
    """The column naming a condition: ``label`` when present, else ``condition``."""
    return "label" if "label" in conditions.columns else "condition"


def _published(cells: pd.DataFrame | None) -> pd.DataFrame | None:
    if cells is None or cells.empty:
        return None
    mine = cells.loc[(cells["source"].astype(str) == "published").to_numpy()]
    return None if mine.empty else mine


def _by_condition(cells: pd.DataFrame, *columns: str):
    """(condition, one array per column) for each condition of ``cells``, its cells in their
    order (as ``groupby("condition", observed=True)`` gives them, without a frame each)."""
    codes, labels = pd.factorize(cells["condition"])
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]  # a cell without a condition is in no group
    ordered = codes[order]
    if not len(order):
        return
    arrays = [cells[c].to_numpy()[order] for c in columns]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    for start, stop in pairwise([*starts, len(order)]):
        yield str(labels[ordered[start]]), *(a[start:stop] for a in arrays)


def condition_iccs(
    conditions: pd.DataFrame, cells: pd.DataFrame | None = None
) -> tuple[pd.Series, str]:
    """Each condition's intraclass correlation (by its label, clipped into [0, 1)) and where
    it comes from: the ANOVA ICC of its per-trial verdicts when ``cells`` holds published
    ones, else the smallest its counts allow (NaN where neither gives one)."""
    m = trials_per_cell(conditions) or 1
    published = _published(cells)
    if published is not None:
        values = {
            label: anova_icc(correct, trials)[0]
            for label, correct, trials in _by_condition(published, "n_correct", "n_trials")
        }
        basis = "ANOVA ICC of the published per-trial verdicts"
    else:
        bound = design_effect_bound(conditions, m) if m > 1 else pd.DataFrame()
        values = dict(zip(bound.get("condition", []), bound.get("icc_min", []), strict=True))
        basis = "the smallest ICC the published counts allow (a lower bound)"
    labels = conditions[_name(conditions)].astype(str)
    icc = pd.Series([values.get(label, np.nan) for label in labels], index=labels, dtype=float)
    return icc.clip(lower=0.0, upper=0.99), basis


def _discordance(conditions: pd.DataFrame, cells: pd.DataFrame | None, n: int) -> tuple[float, str]:
    from analysis.inference.paired import paired_binary_difference
    from analysis.scoring.metrics import reasoning_contrasts

    published = _published(cells)
    if published is not None:
        paired = paired_binary_difference(published, "modal_accuracy")
        observed = paired["discordance"].dropna()
        if len(observed) and observed.median() > 0:
            return float(observed.median()), "median observed discordance of the reasoning pairs"
    pairs = reasoning_contrasts(conditions) if "reasoning_level" in conditions.columns else None
    if pairs is not None and len(pairs):
        floor = pairs["n_modal_correct_floor"] / pairs["n_cells_floor"].clip(lower=1)
        high = pairs["n_modal_correct_high"] / pairs["n_cells_high"].clip(lower=1)
        independent = (floor * (1 - high) + high * (1 - floor)).median()
        basis = "floor and high outcomes independent across scenarios (no gain from pairing)"
    else:
        share = conditions["n_modal_correct"].sum() / max(conditions["n_cells"].sum(), 1)
        independent = 2 * share * (1 - share)
        basis = "two settings' outcomes independent at the conditions' modal accuracy"
    if not independent > 0:
        return 1.0 / n, f"{basis}; none observed, so one scenario in {n}"
    return float(min(independent, 1.0)), basis


def release_design(
    conditions: pd.DataFrame,
    cells: pd.DataFrame | None = None,
    scenarios: pd.DataFrame | None = None,
) -> tuple[dict, dict]:
    """A release's design and where each of its values comes from.

    Parameters
    ----------
    conditions : DataFrame
        Published condition counts (``analysis.scoring.leaderboard.load_conditions``).
    cells : DataFrame, optional
        Scored cells; those of ``source == "published"`` give the ICC and discordance.
    scenarios : DataFrame, optional
        The scenario table: the better degenerate gate's accuracy on its labels is the
        reference gate's rate (without it, the leader's hold and proceed opportunities).

    Returns
    -------
    (dict, dict)
        The design, ``n_scenarios, trials_per_cell, icc, discordance, rate, gate_rate``
        (:data:`DESIGN_FIELDS`, the keywords of :func:`detectable_effect`), and, per field,
        its basis: a sentence saying where the value comes from.

    See Also
    --------
    detectable_effect : What the design can detect (``detectable_effect(**design)``).
    rank_gaps : Table 2's adjacent gaps against the design.
    design_effect_bound : The smallest ICC counts allow, the ICC without verdicts.

    Examples
    --------
    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"label": ["a", "b"], "n_cells": [40, 40],
    ...     "n_trials": [200, 200], "n_trials_correct": [160, 140], "n_pass5": [20, 14],
    ...     "n_modal_correct": [33, 30], "n_hold_opportunities": [10, 10],
    ...     "n_proceed_opportunities": [30, 30]})
    >>> design, basis = release_design(conditions)
    >>> design["n_scenarios"], design["trials_per_cell"], round(design["rate"], 3)
    (40, 5, 0.8)
    >>> round(design["icc"], 3), round(design["discordance"], 3), design["gate_rate"]
    (0.14, 0.335, 0.75)
    >>> basis["rate"]
    'mean trial accuracy of the leader, a'
    """
    m = trials_per_cell(conditions)
    if m is None:
        raise ValueError("conditions: no condition has a scored cell")
    n = int(conditions["n_cells"].max())
    ranked = rank_conditions(conditions)
    leader = ranked.iloc[0]
    icc, icc_basis = condition_iccs(conditions, cells)
    discordance, discordance_basis = _discordance(conditions, cells, n)
    if scenarios is not None:
        from analysis.scoring.metrics import degenerate_gates

        gates = degenerate_gates(scenarios)
        gate = float((gates["n_trials_correct"] / gates["n_trials"]).max())
        gate_basis = "the better degenerate gate (always-hold, always-proceed) on the labels"
    else:
        hold = int(leader["n_hold_opportunities"])
        decided = hold + int(leader["n_proceed_opportunities"])
        gate = max(hold, decided - hold) / max(decided, 1)
        gate_basis = "the better degenerate gate on the leader's decided cells"
    median_icc = float(icc.median()) if icc.notna().any() else 0.0
    design = {
        "n_scenarios": n,
        "trials_per_cell": int(m),
        "icc": median_icc,
        "discordance": discordance,
        "rate": _inside(leader["n_trials_correct"] / leader["n_trials"], leader["n_trials"]),
        "gate_rate": _inside(gate, n),
    }
    basis = {
        "n_scenarios": "the most scored cells of a condition",
        "trials_per_cell": "trials over cells of the published conditions",
        "icc": "median over conditions of " + icc_basis
        if icc.notna().any()
        else "none estimable: 0 assumed (no clustering)",
        "discordance": discordance_basis,
        "rate": f"mean trial accuracy of the leader, {leader[_name(conditions)]}",
        "gate_rate": gate_basis,
    }
    return design, basis


def rank_gaps(
    conditions: pd.DataFrame,
    cells: pd.DataFrame | None = None,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    needed_for: int = 1,
) -> pd.DataFrame:
    """Each pair of adjacent Table 2 ranks (by mean trial accuracy): their gap, the smallest
    gap the release could resolve at the upper one's accuracy (the unpaired comparison of
    :func:`~analysis.inference.detectable.detectable_effect`, at the larger ICC of the two,
    :func:`condition_iccs`), whether the gap reaches it, and for the first ``needed_for``
    pairs the scenarios a release needs to detect their gap.

    Parameters
    ----------
    conditions : DataFrame
        Published condition counts (``analysis.load_conditions``): ``label`` (or
        ``condition``), ``n_cells, n_trials, n_trials_correct`` and the counts
        :func:`design_effect_bound` reads.
    cells : DataFrame, optional
        Scored cells; those of ``source == "published"`` give each condition's ANOVA ICC.
        Without them, the smallest ICC its counts allow (so each MDD is a lower bound).
    alpha, power : float
        Two-sided level and power, each in (0, 1).
    needed_for : int
        How many pairs, from the top, get ``scenarios_needed`` (each a bisection).

    Returns
    -------
    DataFrame
        ``rank, upper, lower, upper_rate, lower_rate, gap, icc, mdd, resolvable,
        scenarios_needed, method`` (gaps and MDDs as differences of proportions): one row
        per adjacent pair, ``rank`` the upper one's rank; empty with fewer than two
        conditions.

    See Also
    --------
    rank_uncertainty_from_counts : Rank sets from the same counts.
    detectable_effect : The unpaired MDD each row states.
    analysis.rank_conditions : Table 2's order.

    Examples
    --------
    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"label": ["a", "b", "c"], "n_cells": [40] * 3,
    ...     "n_trials": [200] * 3, "n_trials_correct": [160, 140, 139],
    ...     "n_pass5": [20, 14, 14], "n_modal_correct": [33, 30, 30],
    ...     "n_hold_opportunities": [10] * 3, "n_proceed_opportunities": [30] * 3})
    >>> gaps = rank_gaps(conditions)
    >>> columns = ["upper", "lower", "gap", "icc", "mdd", "resolvable", "scenarios_needed"]
    >>> gaps[columns].round(3)
      upper lower    gap    icc    mdd  resolvable  scenarios_needed
    0     a     b  0.100  0.179  0.163       False               101
    1     b     c  0.005  0.102  0.160       False              <NA>
    """
    m = trials_per_cell(conditions)
    columns = [
        "rank", "upper", "lower", "upper_rate", "lower_rate", "gap", "icc", "mdd", "resolvable",
        "scenarios_needed", "method",
    ]  # fmt: skip
    if m is None or len(conditions) < 2:
        return pd.DataFrame(columns=columns)
    ranked = rank_conditions(conditions)
    icc, basis = condition_iccs(conditions, cells)
    icc = icc.fillna(0.0)
    n = int(conditions["n_cells"].max())
    names = ranked[_name(ranked)].astype(str).tolist()
    pair_iccs = np.array([max(icc.get(a, 0.0), icc.get(b, 0.0)) for a, b in pairwise(names)])
    top = np.array(
        [
            _inside(k / t, t) if t else np.nan
            for k, t in zip(ranked["n_trials_correct"], ranked["n_trials"], strict=True)
        ]
    )[:-1]
    effective = n * m / (1 + (m - 1) * pair_iccs)
    mdds = unpaired_mdds(effective, np.nan_to_num(top, nan=0.5), alpha, power)
    mdds = np.where(np.isfinite(top), mdds, np.nan)  # one vectorised solve for every pair
    correct, trials = ranked["n_trials_correct"].tolist(), ranked["n_trials"].tolist()
    rates = [k / t if t else np.nan for k, t in zip(correct, trials, strict=True)]
    rows = []
    for i in range(len(ranked) - 1):
        p_up, p_low = rates[i], rates[i + 1]
        up_name, low_name = names[i], names[i + 1]
        pair_icc, rate, mdd = float(pair_iccs[i]), float(top[i]), float(mdds[i])
        gap = p_up - p_low
        needed = np.nan
        if i < needed_for and np.isfinite(rate) and 0 < gap < 1:
            design = {"trials_per_cell": m, "icc": pair_icc, "rate": rate}
            needed = fewest(UNPAIRED, gap, {**design, "alpha": alpha, "power": power})
        rows.append(
            {
                "rank": i + 1,
                "upper": up_name,
                "lower": low_name,
                "upper_rate": p_up,
                "lower_rate": p_low,
                "gap": gap,
                "icc": pair_icc,
                "mdd": mdd,
                "resolvable": bool(gap >= mdd) if np.isfinite(mdd) else False,
                "scenarios_needed": needed,
                "method": f"two-proportion test at n / DEFF, ICC: {basis}",
            }
        )
    frame = pd.DataFrame(rows, columns=columns)
    frame["scenarios_needed"] = frame["scenarios_needed"].astype("Int64")
    return frame
