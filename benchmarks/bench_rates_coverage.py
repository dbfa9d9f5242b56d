"""Coverage of ``rates(..., ci=...)``'s 95% intervals of one rate, against simulated truth.

Each draw is one group of ``m`` scenarios with ``t`` trials each; scenario ``s`` has a
true rate ``p_s`` and ``k_s ~ Binomial(t, p_s)``. Two generators of ``p_s``:

- ``beta``: ``p_s ~ Beta`` with mean ``rate`` and intraclass correlation ``icc`` (on the
  binary scale: 1 / (a + b + 1)); the true rate is ``rate``;
- ``logit``: ``analysis.inference.simulate.simulate_counts`` (a normal scenario effect on
  the logit scale, latent ICC ``icc``); the true rate is ``expected_accuracy``.

Methods: ``cluster`` (what ``rates`` gives by default:
``analysis.inference._arrays.effective_size_interval``), ``wilson`` (``ci="wilson"``:
trials as independent) and ``bootstrap`` (the scenario percentile bootstrap ``rates`` gave
before, for comparison). Printed per method: the worst settings, each with coverage, its
Monte Carlo standard error (binomial, over draws), the share refused (NaN bounds) and the
share of zero-width intervals; then the share of settings below 94% - 2 MC SE.

Run: ``.venv/bin/python benchmarks/bench_rates_coverage.py [--reps 400] [--boot 1000]
[--methods cluster wilson bootstrap] [--generator beta logit] [--csv table.csv]``.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from scipy import optimize

from analysis.inference._arrays import (
    effective_size_interval,
    percentile_interval,
    ratio,
    scenario_weights,
)
from analysis.inference.simulate import expected_accuracy, simulate_counts
from analysis.scoring.intervals import wilson_interval

RATES = (0.01, 0.03, 0.06, 0.15, 0.5, 0.85, 0.97, 0.99)
ICCS = (0.0, 0.1, 0.3, 0.5, 0.75)
SIZES = (10, 20, 50, 106)
TRIALS = (1, 2, 5, 10)


def beta_draws(rng, rate, icc, m, t, reps):
    """(k, n, truth): ``reps`` x ``m`` correct counts of beta-binomial scenarios."""
    if icc == 0:
        p = np.full((reps, m), rate)
    else:
        s = 1 / icc - 1
        p = rng.beta(rate * s, (1 - rate) * s, size=(reps, m))
    return rng.binomial(t, p).astype("float64"), np.full((reps, m), float(t)), rate


def logit_draws(rng, rate, icc, m, t, reps):
    """(k, n, truth) from the package's simulator: latent ICC ``icc`` (scenario effect only),
    intercept set so that the population rate is ``rate``."""
    sd = np.sqrt(icc / (1 - icc) * np.pi**2 / 3)
    intercept = optimize.brentq(lambda a: expected_accuracy(np.array([a]), sd)[0] - rate, -20, 20)
    k = np.vstack(
        [
            simulate_counts(
                rng, np.array([intercept]), np.zeros(m), n_trials=t, scenario_sd=sd, cell_sd=0.0
            )[0]
            for _ in range(reps)
        ]
    )
    return k.astype("float64"), np.full((reps, m), float(t)), rate


def bootstrap(k, n, n_boot, rng):
    """The scenario percentile bootstrap ``rates`` gave before (4000 resamples there)."""
    weights = scenario_weights(len(n), n_boot, rng)
    low, high = percentile_interval(ratio(weights @ k, weights @ n))
    return float(low), float(high)


def interval(method, k, n, n_boot, rng):
    if method == "cluster":
        return effective_size_interval(k, n)[:2]
    if method == "wilson":
        low, high = wilson_interval(k.sum(), n.sum())
        return float(low), float(high)
    return bootstrap(k, n, n_boot, rng)


def run(reps, n_boot, methods, generators, rates=RATES, iccs=ICCS, sizes=SIZES, trials=TRIALS):
    rng = np.random.default_rng(20260501)
    rows = []
    draw = {"beta": beta_draws, "logit": logit_draws}
    for generator, rate, icc, m, t in itertools.product(generators, rates, iccs, sizes, trials):
        if t == 1 and icc > 0:
            continue  # one trial per scenario: the correlation is not there to see
        k, n, truth = draw[generator](rng, rate, icc, m, t, reps)
        for method in methods:
            bounds = np.array([interval(method, k[i], n[i], n_boot, rng) for i in range(reps)])
            refused = np.isnan(bounds).any(axis=1)
            held = ~refused
            covered = (bounds[held, 0] <= truth) & (truth <= bounds[held, 1])
            coverage = covered.mean() if held.any() else np.nan
            rows.append(
                {
                    "generator": generator,
                    "rate": rate,
                    "icc": icc,
                    "scenarios": m,
                    "trials": t,
                    "method": method,
                    "coverage": coverage,
                    "mc_se": np.sqrt(coverage * (1 - coverage) / max(held.sum(), 1)),
                    "refused": refused.mean(),
                    "zero_width": (bounds[held, 1] - bounds[held, 0] <= 0).mean(),
                    "width": (bounds[held, 1] - bounds[held, 0]).mean(),
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--methods", nargs="+", default=["cluster", "wilson", "bootstrap"])
    parser.add_argument("--generator", nargs="+", default=["beta", "logit"])
    parser.add_argument("--rates", nargs="+", type=float, default=list(RATES))
    parser.add_argument("--icc", nargs="+", type=float, default=list(ICCS))
    parser.add_argument("--scenarios", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--trials", nargs="+", type=int, default=list(TRIALS))
    parser.add_argument("--csv", help="also write every setting's row to this CSV file")
    args = parser.parse_args()
    start = time.perf_counter()
    table = run(
        args.reps,
        args.boot,
        args.methods,
        args.generator,
        args.rates,
        args.icc,
        args.scenarios,
        args.trials,
    )
    if args.csv:
        table.to_csv(args.csv, index=False)
    pd.set_option("display.width", 160)
    for method, part in table.groupby("method", sort=False):
        short = part["coverage"] < 0.94 - 2 * part["mc_se"]
        print(
            f"\n{method}: {len(part)} settings, coverage {part['coverage'].min():.3f} to "
            f"{part['coverage'].max():.3f} (mean {part['coverage'].mean():.3f}); below 94% - "
            f"2 MC SE: {short.sum()}; zero-width: {part['zero_width'].mean():.4f}; "
            f"refused: {part['refused'].mean():.3f}; mean width {part['width'].mean():.4f}"
        )
        print(part.nsmallest(6, "coverage").round(4).to_string(index=False))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
