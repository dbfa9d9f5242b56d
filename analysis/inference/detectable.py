"""What a release can detect: the minimum detectable difference of a design, and the
scenarios a release needs to detect a given difference.

A design is the number of scenarios, the trials per cell, the intraclass correlation of the
trials within a cell and, for a paired contrast, the discordance (the share of scenarios
whose binary outcome differs between the two settings). Three comparisons, each with the
test the package runs for it:

- **paired**: a model's reasoning floor against high on its per-scenario modal outcome,
  McNemar's test (:func:`analysis.inference.paired.paired_binary_difference`); its exact
  power at the given discordance (:mod:`analysis.inference.detectable_mcnemar`);
- **unpaired**: two Table 2 conditions from their counts, a two-proportion test at the
  effective sample size of each, scenarios x trials / design effect (the design effect
  1 + (m - 1) ICC); statsmodels' ``NormalIndPower`` on Cohen's h
  (``proportion_effectsize``), converted back to a difference below the given rate;
- **gate**: a condition's mean-trial accuracy against a reference gate's per-scenario
  verdict, paired by scenario, the paired t-test
  (:func:`analysis.inference.paired.paired_accuracy_difference`); statsmodels'
  ``TTestPower`` times the standard deviation of the per-scenario differences the design
  implies.

Every power is statsmodels' (or, for McNemar's test, which statsmodels does not offer, the
exact binomial sum), and every root is found by bisection on it, vectorised over the numbers of
scenarios: statsmodels' ``solve_power`` returns a one-element array instead of a float for
some numbers of scenarios (73, 87, 92, ... of 2 to 1,000), meets its target power only to
about 1e-6, and takes about 40 ms a call. The t-test's power is scipy's noncentral t
(:func:`t_power`), as statsmodels' ``TTestPower.power`` is NaN where scipy's lower tail
underflows.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy import stats

from analysis.inference._design_checks import ALPHA, POWER, _check, _check_counts
from analysis.inference.detectable_mcnemar import MCNEMAR_POWER, mcnemar_mdd

#: Bisection steps: the bracket shrinks by 2^-64, below a double's resolution.
_STEPS = 64
#: The most scenarios :func:`scenarios_needed` searches.
MAX_SCENARIOS = 10_000_000

PAIRED = "reasoning floor vs high (paired by scenario)"
UNPAIRED = "two Table 2 conditions (unpaired, from counts)"
GATE = "condition vs reference gate (paired by scenario)"
COMPARISONS = (PAIRED, UNPAIRED, GATE)
METHODS = {
    PAIRED: MCNEMAR_POWER,
    UNPAIRED: "two-proportion test at n / DEFF per condition, statsmodels NormalIndPower "
    "on Cohen's h",
    GATE: "paired t-test on per-scenario mean-trial accuracy minus the gate's verdict, "
    "statsmodels TTestPower",
}
COLUMNS = [
    "comparison",
    "metric",
    "n_scenarios",
    "trials_per_cell",
    "icc",
    "design_effect",
    "discordance",
    "rate",
    "gate_rate",
    "alpha",
    "power",
    "mdd",
    "method",
    "assumptions",
]


def _bisect(f, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The roots of ``f`` (vectorised, increasing in its argument, f(low) < 0 <= f(high))."""
    low, high = np.array(low, dtype="float64"), np.array(high, dtype="float64")
    for _ in range(_STEPS):
        middle = (low + high) / 2
        above = f(middle) >= 0
        high = np.where(above, middle, high)
        low = np.where(above, low, middle)
    return high


def t_power(effect, n_scenarios, alpha: float = ALPHA) -> np.ndarray:
    """Power of the two-sided one-sample (or paired) t-test on ``n_scenarios`` at the
    standardised ``effect``: the noncentral t's two tails beyond the critical value, each
    as scipy's upper tail, P(T > c; nc) + P(T > c; -nc). This is statsmodels'
    ``ttest_power``, which takes the lower tail as ``nct.cdf(-c)``: scipy gives NaN there
    once it underflows (n = 2 at effect 6, n = 512 at 0.5), and so does statsmodels.

    Examples
    --------
    >>> round(float(t_power(0.2829, 100)), 4), round(float(t_power(6.0, 2)), 4)
    (0.8, 0.4944)
    """
    n = np.asarray(n_scenarios, dtype="float64")
    critical = stats.t.isf(alpha / 2, n - 1)
    centrality = np.asarray(effect, dtype="float64") * np.sqrt(n)
    upper = stats.nct.sf(critical, n - 1, centrality)
    lower = stats.nct.sf(critical, n - 1, -centrality)
    power = upper + lower
    if np.any(np.isnan(power)):
        raise FloatingPointError("the noncentral t gave no power (NaN)")
    return power


def t_effect(n_scenarios, alpha: float = ALPHA, power: float = POWER) -> np.ndarray:
    """The standardised effect (mean / sd of the differences) the two-sided one-sample or
    paired t-test on ``n_scenarios`` detects with ``power``: :func:`t_power` solved by
    bisection (statsmodels' ``TTestPower.solve_power`` is unreliable: see the module). A
    float for one ``n_scenarios``, an array for several.

    Examples
    --------
    >>> round(float(t_effect(100)), 4), round(float(t_effect(120)), 4)
    (0.2829, 0.2578)
    >>> [round(float(x), 3) for x in t_effect([2, 10, 1000])]
    [11.55, 0.996, 0.089]
    """
    n = _check_counts(n_scenarios)
    alpha = _check("alpha", alpha, 0, 1)
    power = _check("power", power, 0, 1)
    flat = n.reshape(-1).astype("float64")
    if flat.size == 1:  # one root: Brent's method, remembered (a release shares one size)
        effect = np.full(n.shape, _t_effect_one(float(flat[0]), alpha, power))
    else:
        low, high = _t_bracket(flat, alpha, power)
        effect = _bisect(lambda e: t_power(e, flat, alpha) - power, low, high).reshape(n.shape)
    return float(effect) if effect.ndim == 0 else effect


def _t_bracket(flat: np.ndarray, alpha: float, power: float) -> tuple[np.ndarray, np.ndarray]:
    """Effects below and above the t-test's root: the z-test's effect is below it (its power
    is higher at any effect), then widen by half until the power is reached (n = 2 at 99%
    power needs about 23)."""
    low = (stats.norm.isf(alpha / 2) + stats.norm.ppf(power)) / np.sqrt(flat)
    low = np.where(t_power(low, flat, alpha) < power, low, 0.0)
    high = 1.25 * np.maximum(low, 1e-3)
    while np.any(short := t_power(high, flat, alpha) < power):
        high = np.where(short, 1.5 * high, high)
    return low, high


@functools.lru_cache(maxsize=4096)
def _t_effect_one(n_scenarios: float, alpha: float, power: float) -> float:
    from scipy.optimize import brentq

    flat = np.array([n_scenarios])
    low, high = _t_bracket(flat, alpha, power)
    gap = lambda e: float(t_power(np.array([e]), flat, alpha)[0]) - power  # noqa: E731
    return float(brentq(gap, low[0], high[0], xtol=1e-14, rtol=1e-14))


def _below(rate: float, h: np.ndarray) -> np.ndarray:
    """The difference rate - p2 of the p2 below ``rate`` at Cohen's h (NaN below 0)."""
    low = 2 * np.arcsin(np.sqrt(rate)) - h
    return np.where(low >= 0, rate - np.sin(low / 2) ** 2, np.nan)


def unpaired_mdd(
    n_scenarios,
    trials_per_cell: int,
    icc: float,
    rate: float,
    alpha: float = ALPHA,
    power: float = POWER,
):
    """How far below a condition at ``rate`` another must lie for a two-sided
    two-proportion test at n / DEFF trials each (n = scenarios x trials, DEFF =
    1 + (trials - 1) ICC) to tell them apart with ``power``: statsmodels' ``NormalIndPower``
    on Cohen's h, solved by bisection. NaN where not even a rate of 0 is detected.

    Examples
    --------
    >>> round(float(unpaired_mdd(106, 5, 0.3, 0.9)), 4)
    0.0887
    """

    n = _check_counts(n_scenarios, trials_per_cell)
    icc = _check("icc", icc, 0, 1, closed_low=True)
    rate = _check("rate", rate, 0, 1)
    alpha = _check("alpha", alpha, 0, 1)
    power = _check("power", power, 0, 1)
    effective = n.reshape(-1) * trials_per_cell / (1 + (trials_per_cell - 1) * icc)
    found = unpaired_mdds(effective, rate, alpha, power).reshape(n.shape)
    return float(found) if found.ndim == 0 else found


def unpaired_mdds(effective, rate, alpha: float = ALPHA, power: float = POWER) -> np.ndarray:
    """:func:`unpaired_mdd` elementwise at ``effective`` trials per group (n / DEFF) and
    ``rate``, in one vectorised bisection (Table 2's adjacent gaps need one per pair).

    >>> unpaired_mdds([1000.0, 1000.0], [0.9, 0.5]).round(4).tolist()
    [0.0406, 0.0625]
    """
    from statsmodels.stats.power import NormalIndPower

    effective, rate = np.broadcast_arrays(
        np.asarray(effective, dtype="float64"), np.asarray(rate, dtype="float64")
    )

    def gap(h: np.ndarray) -> np.ndarray:
        return np.asarray(NormalIndPower().power(h, effective, alpha, ratio=1.0)) - power

    h = _bisect(gap, np.zeros_like(effective), np.full_like(effective, np.pi))
    return np.where(gap(h) >= -1e-9, _below(rate, h), np.nan)


def gate_sd(trials_per_cell: int, icc: float, rate: float, gate_rate: float) -> float:
    """The standard deviation of a scenario's mean-trial accuracy minus a gate's verdict
    (0 or 1): the variance of a mean of m trials with intraclass correlation ICC,
    p (1 - p) (1 + (m - 1) ICC) / m, plus the gate's g (1 - g), as if the two were
    uncorrelated across scenarios (a positive correlation narrows it).

    Examples
    --------
    >>> round(gate_sd(5, 0.3, 0.9, 0.6), 4)
    0.5288
    """
    m = int(trials_per_cell)
    variance = rate * (1 - rate) * (1 + (m - 1) * icc) / m + gate_rate * (1 - gate_rate)
    return float(np.sqrt(variance))


def detectable_effect(
    n_scenarios: int,
    trials_per_cell: int = 5,
    icc: float = 0.0,
    *,
    discordance: float = 0.2,
    rate: float = 0.8,
    gate_rate: float = 0.5,
    alpha: float = ALPHA,
    power: float = POWER,
) -> pd.DataFrame:
    """The minimum detectable difference (MDD) of a design, for three comparisons.

    Parameters
    ----------
    n_scenarios : int
        Scenarios (the clusters; every comparison is over them). At least 2.
    trials_per_cell : int
        Trials of a condition on one scenario, at least 1.
    icc : float
        Intraclass correlation of the trials within a cell, in [0, 1)
        (:func:`analysis.inference.anova_icc` from per-trial verdicts;
        :func:`analysis.inference.design_effect_bound`'s ``icc_min`` from counts).
    discordance : float
        Paired comparison: the share of scenarios whose modal outcome differs between the
        two settings, in (0, 1].
    rate : float
        The accuracy the unpaired and gate comparisons are stated at, in (0, 1): the
        unpaired MDD is the gap below a condition at ``rate``; the gate's per-scenario
        spread is that of a condition at ``rate``.
    gate_rate : float
        The reference gate's accuracy (share of scenarios it gets right), in (0, 1).
    alpha, power : float
        Two-sided level and power, each in (0, 1).

    Returns
    -------
    DataFrame
        One row per comparison (``PAIRED``, ``UNPAIRED``, ``GATE``): ``comparison, metric``,
        the design (``n_scenarios, trials_per_cell, icc, design_effect, discordance, rate,
        gate_rate, alpha, power``), ``mdd`` (a difference of proportions; NaN when no
        difference the design allows reaches the power), ``method`` and ``assumptions``.

    Raises
    ------
    ValueError
        For a design no test can use, naming the argument: fewer than 2 scenarios, fewer
        than 1 trial, an ICC outside [0, 1), a discordance outside (0, 1], a rate, level or
        power outside (0, 1).

    See Also
    --------
    scenarios_needed : Its inverse: the scenarios a difference needs.
    simulated_power : The power each MDD achieves in simulated releases.
    release_design : A release's own design, to pass here.

    Examples
    --------
    The release's size: 106 scenarios of five trials, a moderate ICC:

    >>> table = detectable_effect(106, 5, 0.3, discordance=0.2, rate=0.9, gate_rate=0.6)
    >>> table[["comparison", "mdd"]].round(4)
                                             comparison     mdd
    0      reasoning floor vs high (paired by scenario)  0.1155
    1    two Table 2 conditions (unpaired, from counts)  0.0887
    2  condition vs reference gate (paired by scenario)  0.1452
    >>> detectable_effect(0)
    Traceback (most recent call last):
    ...
    ValueError: n_scenarios must be at least 2 (a test needs two), not 0
    """
    n = int(_check_counts(n_scenarios, trials_per_cell))
    m = int(trials_per_cell)
    icc = _check("icc", icc, 0, 1, closed_low=True)
    discordance = _check("discordance", discordance, 0, 1, closed_high=True)
    rate = _check("rate", rate, 0, 1)
    gate_rate = _check("gate_rate", gate_rate, 0, 1)
    alpha = _check("alpha", alpha, 0, 1)
    power = _check("power", power, 0, 1)
    deff = 1 + (m - 1) * icc
    sd = gate_sd(m, icc, rate, gate_rate)
    base = dict(
        n_scenarios=n, trials_per_cell=m, icc=icc, design_effect=deff, discordance=np.nan,
        rate=np.nan, gate_rate=np.nan, alpha=alpha, power=power,
    )  # fmt: skip
    rows = [
        {
            **base,
            "comparison": PAIRED,
            "metric": "modal_accuracy",
            "discordance": discordance,
            "mdd": mcnemar_mdd(n, discordance, alpha, power),
            "assumptions": "one modal outcome per scenario and setting; the MDD is at most "
            "the discordance (every discordant pair one way)",
        },
        {
            **base,
            "comparison": UNPAIRED,
            "metric": "mean_trial_accuracy",
            "rate": rate,
            "mdd": unpaired_mdd(n, m, icc, rate, alpha, power),
            "assumptions": f"the second condition below one at {rate:.3f}; trials clustered "
            f"within scenario with design effect {deff:.3f}; the two conditions independent",
        },
        {
            **base,
            "comparison": GATE,
            "metric": "mean_trial_accuracy",
            "rate": rate,
            "gate_rate": gate_rate,
            "mdd": t_effect(n, alpha, power) * sd,
            "assumptions": f"sd of per-scenario differences {sd:.3f}, at a condition at "
            f"{rate:.3f} and the gate at {gate_rate:.3f}, uncorrelated across scenarios",
        },
    ]
    for row in rows:
        row["method"] = METHODS[row["comparison"]]
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def _mdd_curve(comparison: str, n: np.ndarray, design: dict) -> np.ndarray:
    """The MDD of ``comparison`` at each of ``n`` scenarios (vectorised)."""
    m, alpha, power = design["trials_per_cell"], design["alpha"], design["power"]
    if comparison == PAIRED:
        return np.atleast_1d(mcnemar_mdd(n, design["discordance"], alpha, power))
    if comparison == UNPAIRED:
        return np.atleast_1d(unpaired_mdd(n, m, design["icc"], design["rate"], alpha, power))
    sd = gate_sd(m, design["icc"], design["rate"], design["gate_rate"])
    return np.atleast_1d(t_effect(n, alpha, power)) * sd


def fewest(comparison: str, difference: float, design: dict) -> float:
    """The fewest scenarios at which ``comparison``'s MDD is at most ``difference`` on
    ``design`` (:func:`scenarios_needed`'s arguments but the difference; the MDD falls as the
    scenarios grow); NaN beyond :data:`MAX_SCENARIOS` or where no number does, as for a
    paired difference beyond the discordance or one below a rate of 0."""
    if (comparison == PAIRED and difference > design["discordance"]) or (
        comparison == UNPAIRED and difference >= design["rate"]
    ):
        return np.nan
    high = 2
    while True:
        mdd = _mdd_curve(comparison, np.array([high]), design)[0]
        if mdd <= difference:
            break
        if high >= MAX_SCENARIOS:
            return np.nan
        high = min(4 * high, MAX_SCENARIOS)
    low = max(2, high // 4)
    if low == high or _mdd_curve(comparison, np.array([low]), design)[0] <= difference:
        return float(low)
    while high - low > 1:  # MDD(low) > difference >= MDD(high)
        middle = (low + high) // 2
        if _mdd_curve(comparison, np.array([middle]), design)[0] <= difference:
            high = middle
        else:
            low = middle
    return float(high)


def scenarios_needed(
    difference: float,
    trials_per_cell: int = 5,
    icc: float = 0.0,
    *,
    discordance: float = 0.2,
    rate: float = 0.8,
    gate_rate: float = 0.5,
    alpha: float = ALPHA,
    power: float = POWER,
) -> pd.DataFrame:
    """The fewest scenarios a release needs for each comparison of
    :func:`detectable_effect` to detect ``difference`` with ``power``: the inverse of the
    minimum detectable difference, found by integer bisection on it.

    Parameters
    ----------
    difference : float
        The difference of proportions to detect, in (0, 1).
    trials_per_cell : int
        Trials of a condition on one scenario.
    icc, discordance, rate, gate_rate, alpha, power : float
        The rest of the design, as :func:`detectable_effect` takes it.

    Returns
    -------
    DataFrame
        :func:`detectable_effect`'s columns at the scenarios found, with ``difference`` and
        ``scenarios_needed`` (a whole number; missing where no number of scenarios up to
        :data:`MAX_SCENARIOS` does, as for a paired difference beyond the discordance).

    See Also
    --------
    detectable_effect : The MDD at a given number of scenarios.
    rank_gaps : The scenarios Table 2's closest ranks would need.

    Examples
    --------
    >>> table = scenarios_needed(0.05, 5, 0.3, discordance=0.2, rate=0.9, gate_rate=0.6)
    >>> table[["comparison", "scenarios_needed"]]
                                             comparison  scenarios_needed
    0      reasoning floor vs high (paired by scenario)               622
    1    two Table 2 conditions (unpaired, from counts)               300
    2  condition vs reference gate (paired by scenario)               880
    """
    difference = _check("difference", difference, 0, 1)
    design = {
        "trials_per_cell": trials_per_cell,
        "icc": icc,
        "discordance": discordance,
        "rate": rate,
        "gate_rate": gate_rate,
        "alpha": alpha,
        "power": power,
    }
    detectable_effect(2, **design)  # the design checked once, naming a bad argument
    rows = []
    for comparison in COMPARISONS:
        n = fewest(comparison, difference, design)
        at = int(n) if np.isfinite(n) else 2
        row = detectable_effect(at, **design).set_index("comparison").loc[comparison]
        rows.append({**row.to_dict(), "comparison": comparison, "scenarios_needed": n})
        if not np.isfinite(n):
            rows[-1].update(n_scenarios=np.nan, mdd=np.nan)
    frame = pd.DataFrame(rows).assign(difference=difference)
    frame["scenarios_needed"] = frame["scenarios_needed"].astype("Int64")
    return frame.reindex(columns=[*COLUMNS, "difference", "scenarios_needed"])
