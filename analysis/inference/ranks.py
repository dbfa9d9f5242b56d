"""Leaderboard rank uncertainty: each condition's marginal 95% rank set, simultaneous 95% rank
sets that hold for every condition at once, and P(first) with ties shared.

The sets come from confidence intervals for the pairwise differences of the conditions'
accuracies (Klein, Wright and Wieczorek's construction): condition j is ranked above i only
where the interval for theta_j - theta_i lies above 0, and i's rank set runs from 1 + (the
conditions ranked above it) to the number of conditions less those ranked below it. The
intervals are studentised-bootstrap: each pairwise difference over its bootstrap standard
error, the critical value the 95th percentile of the largest bootstrap ``|t|`` over every pair
(simultaneous sets, ``t_critical_joint``) or over the pairs of one condition (marginal sets),
stepped down as Romano and Wolf's procedure does (the critical value recomputed over the
pairs not yet separated, until a step separates none; as Mogstad, Romano, Shaikh and Wilhelm
do for ranks), so when the intervals hold, every true rank lies in its set. Percentiles of
the bootstrap's ranks, which an earlier version printed, cover less than their level against
the truth.

The bootstrap resamples scenarios where per-trial verdicts exist (clustering and the pairing
across conditions kept). From counts alone it redraws each condition's correct trials
independently; the ``clustering`` column says what that assumes: trials independent, or
deviations inflated by a design effect (e.g. the smallest the counts allow,
:mod:`analysis.inference.design_bound`, so any real clustering beyond it still narrows the
sets too much). ``benchmarks/bench_rank_sets.py`` measures the coverage against truth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inference._arrays import (
    MIN_CLUSTERS,
    N_BOOT,
    SEED,
    accuracy_replicates,
    by_source,
    cell_arrays,
    ratio,
)
from analysis.inference.rank_sets import first_place_shares, simultaneous_rank_sets

SETS = "studentised-bootstrap step-down max-T intervals of all pairwise differences (95%)"
BY_SCENARIO = f"scenario bootstrap of per-trial verdicts; rank sets from {SETS}"
BY_COUNTS = f"parametric bootstrap from each condition's counts; rank sets from {SETS}"
CLUSTERED = "scenarios resampled (trials of a scenario move together)"
INDEPENDENT = "trials independent (no clustering; the sets are too narrow if trials cluster)"
INFLATED = (
    "deviations inflated by each condition's design effect ({what}); more clustering than "
    "that would widen the sets"
)
#: Up to this many conditions every condition gets rank sets (all pairs); above it, by
#: default, the :data:`LEADING` conditions of highest estimate do.
ALL_PAIRS_UP_TO = 60
LEADING = 30


def _shown(share: float, n_boot: int) -> str:
    """P(first) for a reader: three decimals; "< 0.001" below that (never a 0 that is not
    one), "< 1/B" where no resample ranked it first."""
    if share <= 0:
        return f"< 1/{n_boot}"
    return f"{share:.3f}" if share >= 0.001 else "< 0.001"


def _leading(leading: int | str | None, n: int) -> int | None:
    """The conditions given rank sets: every one up to :data:`ALL_PAIRS_UP_TO` ("auto"),
    else the :data:`LEADING`; an int, those; None, every one."""
    if leading == "auto":
        return None if n <= ALL_PAIRS_UP_TO else LEADING
    if leading is not None and (not isinstance(leading, int) or leading < 1):
        raise ValueError(f"leading must be a positive int, None or 'auto', got {leading!r}")
    return None if leading is None or leading >= n else leading


def _summarise(
    labels, estimate, replicates, method, clustering, n_clusters, source, n_resampled, leading
):
    observed = pd.Series(np.nan_to_num(estimate, nan=-1.0)).rank(ascending=False, method="min")
    leading = _leading(leading, len(estimate))
    sets = simultaneous_rank_sets(estimate, replicates, n_clusters=n_resampled, leading=leading)
    shares = first_place_shares(replicates)
    n_boot = len(replicates)
    frame = pd.DataFrame(
        {
            "source": source,
            "condition": labels,
            "estimate": estimate,
            "rank": observed.astype(int).to_numpy(),
            "rank_low": pd.array(sets["low"], dtype="Int64"),
            "rank_high": pd.array(sets["high"], dtype="Int64"),
            "rank_low_joint": pd.array(sets["low_joint"], dtype="Int64"),
            "rank_high_joint": pd.array(sets["high_joint"], dtype="Int64"),
            "t_critical_joint": sets["t_critical_joint"],
            "p_first": np.where(shares > 0, shares, np.nan),
            "p_first_shown": [_shown(s, n_boot) for s in shares],
            "method": method,
            "clustering": clustering,
            "n_clusters": n_clusters,
        }
    )
    if leading is not None:
        frame["note"] = np.where(
            frame["rank_low"].isna(),
            f"no rank set: outside the leading {leading} of {len(frame)} conditions "
            "(leading=None gives every condition one)",
            f"rank sets of the leading {leading} of {len(frame)} conditions, from the pairs "
            "involving one of them",
        )
    return frame.sort_values(["rank", "condition"], ignore_index=True)


def rank_uncertainty(
    cells: pd.DataFrame,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    leading: int | str | None = "auto",
) -> pd.DataFrame:
    """Rank by mean-trial accuracy within each source, with marginal and simultaneous 95%
    rank sets (:func:`simultaneous_rank_sets`) and the probability of ranking first (ties
    shared; ``p_first`` NaN and ``p_first_shown`` "< 1/B" where no resample ranks it first),
    scenarios resampled (shared by all conditions, so the comparison stays paired). Ties
    share the best rank. A source of fewer than ``MIN_CLUSTERS`` scenarios gets no rank sets
    and no P(first) (``note`` says why). Above :data:`ALL_PAIRS_UP_TO` conditions only the
    ``leading`` (default :data:`LEADING`) get rank sets, from the pairs involving one of them
    (``note`` says so; ``leading=None``: every condition, work growing with their square).

    Parameters
    ----------
    cells : DataFrame
        Scored cells (``analysis.score_cells``), of one or more ``source``.
    n_boot : int
        Scenario bootstrap resamples.
    seed : int
        Seeds the resampling (the ``i``-th source from ``seed + i``).
    leading : int, None or "auto"
        The conditions of highest accuracy given rank sets: "auto" every one up to
        :data:`ALL_PAIRS_UP_TO` conditions, else the :data:`LEADING`; None every one.

    Returns
    -------
    DataFrame
        One row per condition and source, best first: ``source, condition, estimate``
        (mean-trial accuracy), ``rank``, ``rank_low, rank_high`` (the marginal 95% rank
        set), ``rank_low_joint, rank_high_joint`` (simultaneous), ``t_critical_joint``,
        ``p_first, p_first_shown``, ``method, clustering, n_clusters`` (scenarios scored)
        and, where some conditions get no set, ``note``.

    See Also
    --------
    rank_uncertainty_from_counts : The same from published counts alone.
    simultaneous_rank_sets : The rank sets from any bootstrap replicates.
    analysis.rank_conditions : Table 2's ranking.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=3, n_scenarios=50, seed=4)
    >>> out = rank_uncertainty(cells, n_boot=500)
    >>> sets = ["rank_low", "rank_high", "rank_low_joint", "rank_high_joint"]
    >>> out.set_index("condition")[["estimate", *sets]].round(3)
                   estimate  rank_low  rank_high  rank_low_joint  rank_high_joint
    condition
    sim-03 (off)      0.776         1          2               1                2
    sim-03 (high)     0.752         1          2               1                3
    sim-01 (high)     0.652         2          6               2                6
    sim-02 (off)      0.596         3          6               3                6
    sim-01 (off)      0.576         3          6               3                6
    sim-02 (high)     0.568         3          6               3                6
    >>> out["p_first_shown"].tolist()
    ['0.730', '0.268', '0.002', '< 1/500', '< 1/500', '< 1/500']
    >>> round(float(out["p_first"].sum()), 6)
    1.0
    """
    frames = []
    for offset, (source, part) in enumerate(by_source(cells)):
        arrays = cell_arrays(part)
        replicates = accuracy_replicates(arrays, n_boot, seed + offset)
        estimate = ratio(arrays.n_correct.sum(1), arrays.n_trials.sum(1))
        clusters = (arrays.scored > 0).sum(1)
        n_scenarios = len(arrays.scenarios)
        frame = _summarise(
            arrays.conditions,
            estimate,
            replicates,
            BY_SCENARIO,
            CLUSTERED,
            clusters,
            source,
            n_scenarios,
            leading,
        )
        if n_scenarios < MIN_CLUSTERS:
            sets = ["rank_low", "rank_high", "rank_low_joint", "rank_high_joint"]
            frame[sets] = pd.NA
            frame[sets] = frame[sets].astype("Int64")
            frame[["t_critical_joint", "p_first"]] = np.nan
            frame["p_first_shown"] = ""
            frame["note"] = f"no rank sets: {n_scenarios} scenario(s), fewer than {MIN_CLUSTERS}"
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def rank_uncertainty_from_counts(
    conditions: pd.DataFrame,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    label: str = "label",
    design_effect: np.ndarray | float | None = None,
    design_effect_source: str = "given",
    leading: int | str | None = "auto",
) -> pd.DataFrame:
    """Rank uncertainty from per-condition counts only (``n_trials_correct / n_trials``).

    Each condition's correct count is redrawn independently as Binomial(n, p~) at the
    plus-four rate p~ = (k + 2) / (n + 4) (never 0 or 1, so no condition is certain), and
    its deviation from p~ added to k / n, times sqrt(``design_effect``) where given. Without
    a design effect this treats trials as independent; either way it ignores the pairing
    across conditions. ``clustering`` says which.

    Parameters
    ----------
    conditions : DataFrame
        The column named by ``label``, ``n_trials_correct, n_trials`` and (optionally)
        ``source``.
    n_boot : int
        Parametric bootstrap draws.
    seed : int
        Seeds the draws.
    label : str
        The column naming each condition.
    design_effect : array or float, optional
        Each condition's design effect (NaN or below 1: 1), e.g.
        :func:`analysis.inference.design_bound.design_effect_bound`'s ``design_effect_min``.
    design_effect_source : str
        What the design effects are, for ``clustering``.
    leading : int, None or "auto"
        The conditions given rank sets, as in :func:`rank_uncertainty`.

    Returns
    -------
    DataFrame
        One row per condition, best first, with :func:`rank_uncertainty`'s columns;
        ``n_clusters`` is NaN (no scenarios are resampled) and ``clustering`` says what the
        draws assume.

    Raises
    ------
    ValueError
        When ``conditions`` lacks one of the columns it needs.

    See Also
    --------
    rank_uncertainty : Rank sets from per-trial verdicts, the pairing kept.
    design_effect_bound : The smallest design effect each condition's counts allow.
    rank_gaps : Whether each adjacent gap is one the release could resolve.

    Examples
    --------
    Trials independent, then each condition's deviations inflated by a design effect of 3:

    >>> import pandas as pd
    >>> conditions = pd.DataFrame({"label": ["a", "b", "c"], "source": "published",
    ...                            "n_trials_correct": [92, 82, 70], "n_trials": 100})
    >>> columns = ["condition", "rank_low", "rank_high", "rank_low_joint",
    ...            "rank_high_joint", "p_first_shown"]
    >>> rank_uncertainty_from_counts(conditions, n_boot=500)[columns]
      condition  rank_low  rank_high  rank_low_joint  rank_high_joint p_first_shown
    0         a         1          1               1                2         0.988
    1         b         1          3               1                3         0.012
    2         c         3          3               2                3       < 1/500
    >>> rank_uncertainty_from_counts(conditions, n_boot=500, design_effect=3.0)[columns]
      condition  rank_low  rank_high  rank_low_joint  rank_high_joint p_first_shown
    0         a         1          3               1                3         0.902
    1         b         1          3               1                3         0.090
    2         c         1          3               1                3         0.008
    """
    for column in (label, "n_trials_correct", "n_trials"):
        if column not in conditions:
            raise ValueError(f"conditions has no column {column!r}")
    rng = np.random.default_rng(seed)
    k = conditions["n_trials_correct"].to_numpy(dtype="int64")
    n = conditions["n_trials"].to_numpy(dtype="int64")
    estimate = ratio(k, n)
    plus_four = (k + 2) / (n + 4)
    deviation = ratio(rng.binomial(n, plus_four, size=(n_boot, len(n))), n) - plus_four
    clustering = INDEPENDENT
    if design_effect is not None:
        deff = np.broadcast_to(np.asarray(design_effect, dtype="float64"), estimate.shape)
        deviation = deviation * np.sqrt(np.fmax(np.nan_to_num(deff, nan=1.0), 1.0))
        clustering = INFLATED.format(what=design_effect_source)
    source = conditions["source"].astype(str).iloc[0] if "source" in conditions else "counts"
    return _summarise(
        conditions[label].astype(str).to_numpy(),
        estimate,
        estimate + deviation,
        BY_COUNTS,
        clustering,
        np.nan,
        source,
        None,
        leading,
    )
