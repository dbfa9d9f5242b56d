"""The power of each comparison of :func:`analysis.inference.detectable_effect`, achieved in
simulated releases with known truth: the check that a minimum detectable difference is what
its test detects with the stated power.

Each draw is one release at the design, with the true difference set to the comparison's MDD,
and runs the comparison's test:

- paired: per scenario, the floor and high modal outcomes, discordant with probability the
  discordance and split (psi + d) / 2 against (psi - d) / 2; McNemar's score test
  (:func:`analysis.inference.paired.mcnemar_score_p`);
- unpaired: two conditions' correct trials, m per scenario, each scenario's accuracy drawn
  from a beta distribution with the design's intraclass correlation (beta-binomial); the
  two-proportion z-test (statsmodels) on counts divided by the design effect;
- gate: a condition's per-scenario mean-trial accuracy (beta-binomial as above) minus a gate's
  independent verdict, the gate's rate set so that the condition leads it by the MDD (the
  gate's spread enters the MDD, so the rate is found by iterating); the one-sample t-test on
  the differences (scipy), which is the paired t-test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportions_ztest

from analysis.inference.detectable import (
    ALPHA,
    COMPARISONS,
    GATE,
    PAIRED,
    POWER,
    UNPAIRED,
    detectable_effect,
)


def _beta_binomial(rng: np.random.Generator, mean: float, icc: float, m: int, size):
    """Correct trials of ``m`` per cell, cells drawn with intraclass correlation ``icc``."""
    if icc <= 0:
        return rng.binomial(m, mean, size=size)
    total = 1 / icc - 1
    return rng.binomial(m, rng.beta(mean * total, (1 - mean) * total, size=size))


def _gate_at_mdd(design: dict, n: int) -> tuple[float, float]:
    """(MDD, gate rate) with the condition at ``rate`` leading the gate by the MDD."""
    gate = design["gate_rate"]
    for _ in range(50):
        row = detectable_effect(n, **{**design, "gate_rate": gate}).set_index("comparison")
        mdd = float(row.loc[GATE, "mdd"])
        if abs(design["rate"] - mdd - gate) < 1e-10:
            break
        gate = float(np.clip(design["rate"] - mdd, 1e-6, 1 - 1e-6))
    return mdd, gate


def simulated_power(
    n_scenarios: int,
    trials_per_cell: int = 5,
    icc: float = 0.0,
    *,
    discordance: float = 0.2,
    rate: float = 0.8,
    gate_rate: float = 0.5,
    alpha: float = ALPHA,
    power: float = POWER,
    draws: int = 400,
    seed: int = 39,
) -> pd.DataFrame:
    """Per comparison, the power its test achieves over ``draws`` simulated releases whose
    true difference is the comparison's minimum detectable difference at ``power``.

    Parameters
    ----------
    n_scenarios, trials_per_cell : int
        Scenarios, and trials of a condition on one scenario.
    icc, discordance, rate, gate_rate, alpha, power : float
        The rest of the design, as :func:`detectable_effect` takes it (``gate_rate``: where
        the search for the gate's rate starts).
    draws : int
        Simulated releases per comparison.
    seed : int
        Seeds the draws.

    Returns
    -------
    DataFrame
        ``comparison, n_scenarios, mdd, power_nominal, power_achieved, mc_se, draws``
        (``mc_se``: the binomial Monte Carlo standard error of the achieved power; NaN
        power where the design has no MDD): one row per comparison of
        :func:`detectable_effect`.

    See Also
    --------
    detectable_effect : The MDDs whose power this checks.
    simulate_release : Whole simulated releases, for any method.

    Examples
    --------
    The achieved power of each MDD lies within about two Monte Carlo standard errors of
    the nominal 0.8:

    >>> table = simulated_power(106, 5, icc=0.3, discordance=0.3, rate=0.85, draws=200)
    >>> table[["mdd", "power_nominal", "power_achieved", "mc_se"]].round(3)
         mdd  power_nominal  power_achieved  mc_se
    0  0.144            0.8           0.810  0.028
    1  0.102            0.8           0.785  0.029
    2  0.141            0.8           0.795  0.029
    """
    rng = np.random.default_rng(seed)
    design = dict(
        trials_per_cell=trials_per_cell, icc=icc, discordance=discordance, rate=rate,
        gate_rate=gate_rate, alpha=alpha, power=power,
    )  # fmt: skip
    n, m = int(n_scenarios), int(trials_per_cell)
    mdd = detectable_effect(n, **design).set_index("comparison")["mdd"].astype(float)
    gate_mdd, gate = _gate_at_mdd(design, n)
    mdd[GATE] = gate_mdd
    rejected: dict[str, float] = {}
    d = mdd[PAIRED]
    if np.isfinite(d):
        shares = [(discordance + d) / 2, (discordance - d) / 2, 1 - discordance]
        counts = rng.multinomial(n, shares, size=draws)  # only high, only floor, concordant
        from analysis.inference.paired import mcnemar_score_p

        p = np.array([mcnemar_score_p(int(b), int(c)) for b, c, _ in counts])
        rejected[PAIRED] = float((p < alpha).mean())
    d = mdd[UNPAIRED]
    if np.isfinite(d):
        deff = 1 + (m - 1) * icc
        first = _beta_binomial(rng, rate, icc, m, (draws, n)).sum(axis=1) / deff
        second = _beta_binomial(rng, rate - d, icc, m, (draws, n)).sum(axis=1) / deff
        trials = np.full(2, n * m / deff)
        pairs = zip(first, second, strict=True)
        p = np.array([proportions_ztest(np.array([a, b]), trials)[1] for a, b in pairs])
        rejected[UNPAIRED] = float((p < alpha).mean())
    if np.isfinite(gate_mdd):
        correct = _beta_binomial(rng, rate, icc, m, (draws, n)) / m
        verdict = rng.random((draws, n)) < gate
        p = stats.ttest_1samp(correct - verdict, 0.0, axis=1).pvalue
        rejected[GATE] = float((p < alpha).mean())
    rows = []
    for comparison in COMPARISONS:
        achieved = rejected.get(comparison, np.nan)
        rows.append(
            {
                "comparison": comparison,
                "n_scenarios": n,
                "mdd": float(mdd[comparison]),
                "power_nominal": power,
                "power_achieved": achieved,
                "mc_se": float(np.sqrt(achieved * (1 - achieved) / draws)),
                "draws": draws,
            }
        )
    return pd.DataFrame(rows)
