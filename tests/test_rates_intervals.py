"""rates' intervals held to simulated truth and to an independent computation, and the rows
it gives no interval (or no zero-width one)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

from analysis.exploring.rate_table import MODIFIED_WILSON, rates
from analysis.inference._arrays import EFFECTIVE_SIZE_CP, MIN_CLUSTERS, effective_size_interval
from analysis.inference.simulate import expected_accuracy, simulate_counts

Z = stats.norm.isf(0.025)


def count_cells(k: np.ndarray, n_trials: int) -> pd.DataFrame:
    """Scored cells of one condition per row of ``k`` (draws x scenarios of correct trials)."""
    draws, m = k.shape
    return pd.DataFrame(
        {
            "source": "run",
            "condition": np.repeat([f"draw-{i:04d}" for i in range(draws)], m),
            "scenario_id": np.tile([f"s-{j:03d}" for j in range(m)], draws),
            "n_trials": n_trials,
            "n_correct": k.ravel(),
            "modal_scored": True,
            "modal_correct": k.ravel() * 2 > n_trials,
            "pass_all": k.ravel() == n_trials,
        }
    )


def logit_normal(rate: float, icc: float, m: int, t: int, draws: int, seed: int):
    """(k, truth) from ``simulate_counts``: a scenario effect of latent ICC ``icc``, the
    intercept set so that the population rate is ``rate``."""
    rng = np.random.default_rng(seed)
    sd = np.sqrt(icc / (1 - icc) * np.pi**2 / 3)
    a = optimize.brentq(lambda x: expected_accuracy(np.array([x]), sd)[0] - rate, -20, 20)
    k = np.vstack(
        [
            simulate_counts(rng, np.array([a]), np.zeros(m), n_trials=t, scenario_sd=sd, cell_sd=0)
            for _ in range(draws)
        ]
    )
    return k, rate


def beta_binomial(rate: float, icc: float, m: int, t: int, draws: int, seed: int):
    """(k, truth): scenario rates ~ Beta of mean ``rate`` and binary ICC ``icc``."""
    rng = np.random.default_rng(seed)
    s = 1 / icc - 1
    p = rng.beta(rate * s, (1 - rate) * s, size=(draws, m))
    return rng.binomial(t, p), rate


#: Hard settings: (generator, rate, ICC, scenarios, trials per cell). Where the scenario
#: percentile bootstrap covered 88-92% (high ICC, a rate near 0 or 1, 10-20 scenarios) and
#: where the rate is carried by a few scenarios (a skewed beta at a low rate).
HARD = [
    (logit_normal, 0.97, 0.5, 10, 5),
    (logit_normal, 0.85, 0.5, 20, 5),
    (logit_normal, 0.03, 0.75, 20, 10),
    (logit_normal, 0.06, 0.0, 50, 1),
    (beta_binomial, 0.06, 0.5, 20, 10),
    (beta_binomial, 0.99, 0.3, 50, 10),
]
DRAWS = 300


@pytest.mark.parametrize(("generator", "rate", "icc", "m", "t"), HARD)
def test_the_clustered_interval_covers_the_true_rate(generator, rate, icc, m, t):
    """Coverage of the default interval over DRAWS simulated groups, each one condition of
    one ``rates`` call, at least 94% within two Monte Carlo standard errors."""
    k, truth = generator(rate, icc, m, t, DRAWS, seed=int(1000 * rate) + m + t)
    out = rates(count_cells(k, t), by="condition")
    assert len(out) == DRAWS and (out["method"] == EFFECTIVE_SIZE_CP).all()
    assert (out["ci_high"] > out["ci_low"]).all()  # never zero-width
    covered = ((out["ci_low"] <= truth) & (truth <= out["ci_high"])).mean()
    mc_se = np.sqrt(0.94 * 0.06 / DRAWS)
    assert covered >= 0.94 - 2 * mc_se, f"coverage {covered:.3f}"


def _by_hand(k: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """The interval computed without the package: the cluster-robust variance of the mean
    from statsmodels' OLS on one row per trial (clusters = scenarios, its G / (G - 1)
    correction), the effective size r (1 - r) / V, Satterthwaite df of the squared cluster
    residuals, Korn-Graubard's (z / t)^2, floored at the scenarios' Kish size at m - 1 df,
    and statsmodels' Clopper-Pearson."""
    pairs = zip(k.astype(int), n.astype(int), strict=True)
    y = np.concatenate([np.r_[np.ones(c), np.zeros(s - c)] for c, s in pairs])
    groups = np.repeat(np.arange(len(k)), n.astype(int))
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    r, variance, m = fit.params[0], fit.bse[0] ** 2, len(k)
    e2 = (k - r * n) ** 2
    df = min(m - 1, e2.sum() ** 2 / (e2**2).sum())
    size = min(r * (1 - r) / variance, n.sum()) * (Z / stats.t.isf(0.025, df)) ** 2
    floor = n.sum() ** 2 / (n**2).sum() * (Z / stats.t.isf(0.025, m - 1)) ** 2
    size = max(size, floor)
    low, high = proportion_confint(r * size, size, method="beta")
    return float(low), float(high)


@pytest.mark.parametrize(
    ("k", "n"),
    [
        ([5, 5, 5, 5, 5, 5, 4, 4, 3, 5, 5, 2], [5] * 12),  # a design effect above 1
        ([1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0], [3, 5, 5, 5, 4, 5, 5, 5, 5, 5, 5, 5, 2, 5]),
        ([0] * 9 + [1], [1] * 10),  # one cell per scenario: 1 / 10
    ],
)
def test_the_interval_is_the_one_computed_independently(k, n):
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    cells = pd.DataFrame(
        {
            "source": "run",
            "condition": "m (off)",
            "scenario_id": [f"s-{j:02d}" for j in range(len(k))],
            "n_trials": n.astype(int),
            "n_correct": k.astype(int),
            "modal_scored": True,
            "modal_correct": True,
            "pass_all": False,
        }
    )
    row = rates(cells).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(_by_hand(k, n), rel=1e-9, abs=1e-12)
    assert (row["k"], row["n"]) == (k.sum(), n.sum())


def test_a_hand_worked_value():
    """Eleven scenarios all correct on 5 trials, one at 0 of 5: r = 55/60, cluster variance
    12/11 * (11 * (5 - 55/12)^2 + (55/12)^2) / 60^2, one df (one residual carries it), so
    the floor decides: 12 scenarios at 11 df."""
    k, n = np.r_[np.full(11, 5.0), 0.0], np.full(12, 5.0)
    low, high, size = effective_size_interval(k, n)
    expected_size = 12 * (Z / stats.t.isf(0.025, 11)) ** 2
    assert size == pytest.approx(expected_size)
    expected = proportion_confint(55 / 60 * expected_size, expected_size, method="beta")
    assert (low, high) == pytest.approx(expected)
    assert (round(low, 4), round(high, 4)) == (0.5639, 0.9991)


@pytest.mark.parametrize(("k", "n"), [([1], [1]), ([0, 0], [1, 1]), ([3] * 9, [5] * 9)])
def test_fewer_than_ten_scenarios_give_no_interval_and_a_note(k, n):
    cells = pd.DataFrame(
        {
            "source": "run",
            "condition": "m (off)",
            "scenario_id": [f"s-{j}" for j in range(len(k))],
            "n_trials": n,
            "n_correct": k,
            "modal_scored": True,
            "modal_correct": True,
            "pass_all": False,
        }
    )
    row = rates(cells).iloc[0]
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert row["note"] == f"no interval: {len(k)} scenario(s), fewer than {MIN_CLUSTERS}"
    assert row["estimate"] == sum(k) / sum(n)


@pytest.mark.parametrize("k", [0, 12])
def test_a_rate_of_0_or_1_on_ten_or_more_scenarios_is_not_zero_width(k):
    low, high, _ = effective_size_interval(np.full(12, k / 12 * 5), np.full(12, 5.0))
    assert high - low > 0.2  # 12 scenarios counted once each: wide


def test_wilson_rows_say_what_they_assume():
    cells = count_cells(np.array([[5, 5, 0, 5, 0, 5, 5, 5, 0, 5, 5, 5]]), 5)
    row = rates(cells, ci="wilson").iloc[0]
    assert row["method"] == f"{MODIFIED_WILSON} (treats each trial as independent)"
    assert "held fixed" in row["note"] and "ci='cluster'" in row["note"]
    clustered = rates(cells).iloc[0]
    assert clustered["ci_high"] - clustered["ci_low"] > row["ci_high"] - row["ci_low"]


def test_weighted_miss_counts_cells_not_weight_units():
    """A ratio of tier weights: its independent units are the cells (Kish size of their
    weights), not the weight's units; the same cells at weights 1 and 100 give one interval."""
    rng = np.random.default_rng(3)
    missed = rng.random(40) < 0.2
    base = {
        "source": "run",
        "condition": "m (off)",
        "scenario_id": [f"s-{j:02d}" for j in range(40)],
        "n_trials": 5,
        "n_correct": np.where(missed, 1, 5),
        "modal_scored": True,
        "modal_correct": ~missed,
        "pass_all": ~missed,
        "directionally_scored": True,
        "required_gate": "blocked",
        "modal_decision": np.where(missed, "allowed", "blocked"),
    }
    small = rates(pd.DataFrame({**base, "tier_weight": 1}), metric="weighted_miss").iloc[0]
    large = rates(pd.DataFrame({**base, "tier_weight": 100}), metric="weighted_miss").iloc[0]
    assert (small["ci_low"], small["ci_high"]) == pytest.approx((large["ci_low"], large["ci_high"]))
    modal = rates(pd.DataFrame({**base, "tier_weight": 1}), metric="modal_accuracy").iloc[0]
    assert small["ci_high"] - small["ci_low"] == pytest.approx(modal["ci_high"] - modal["ci_low"])
