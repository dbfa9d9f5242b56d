"""Coverage of the leaderboard's rank sets against known truth.

Each draw makes a release with known true mean-trial accuracies, computes the rank sets the
package prints, and asks whether every condition's true rank lies in its set at once
(simultaneous sets) and, per condition, in its marginal interval. Two models of a release:

- ``counts``: the package's count model, each condition's correct trials Binomial(n, p)
  independently, true rates drawn uniformly from ``--rates`` or, second, the release's
  published mean-trial accuracies (close together, so many near-ties); sets from
  :func:`analysis.inference.rank_uncertainty_from_counts` (trials independent);
- ``simulator``: :func:`analysis.inference.simulate_release` (scenario and cell random
  effects, 5 trials per cell, a new seed per draw, so new condition effects too); sets from
  :func:`analysis.inference.rank_uncertainty`, which resamples scenarios.

Coverage comes with its Monte Carlo standard error sqrt(c (1 - c) / draws) (draws are
independent). True ranks: by true accuracy, ties (probability 0 here) sharing the best.

Run: ``.venv/bin/python benchmarks/bench_rank_sets.py [--draws 200] [--boot 4000]
[--models 15] [--scenarios 106 40] [--conditions 30] [--trials 530]``.
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analysis import inference as inf
from analysis.inference.simulate import simulate_release, simulated_cells


def _covered(ranks: pd.DataFrame, truth: pd.Series) -> tuple[bool, float]:
    """(every true rank inside its simultaneous set, share inside its marginal interval)."""
    true_rank = pd.Series(rankdata(-truth.to_numpy(), method="min"), index=truth.index)
    r = ranks.set_index("condition")
    t = true_rank.reindex(r.index)
    joint = bool(((r.rank_low_joint <= t) & (t <= r.rank_high_joint)).all())
    marginal = float(((r.rank_low <= t) & (t <= r.rank_high)).mean())
    return joint, marginal


@functools.lru_cache(maxsize=1)
def release_rates() -> pd.Series:
    """The release's published mean-trial accuracies, as true rates."""
    from analysis.corpus.scenarios import load_scenarios
    from analysis.scoring.leaderboard import load_conditions

    conditions = load_conditions(load_scenarios())
    rates = conditions.n_trials_correct / conditions.n_trials
    return pd.Series(rates.to_numpy(), index=conditions.label.astype(str).to_numpy())


def counts_draw(rng, truth: pd.Series, n_trials: int, n_boot: int, seed: int):
    conditions = pd.DataFrame(
        {
            "label": truth.index,
            "n_trials": n_trials,
            "n_trials_correct": rng.binomial(n_trials, truth.to_numpy()),
            "source": "simulated",
        }
    )
    ranks = inf.rank_uncertainty_from_counts(conditions, n_boot=n_boot, seed=seed)
    return _covered(ranks, truth)


def simulator_draw(n_models: int, n_scenarios: int, n_boot: int, seed: int):
    _, _, truth = simulate_release(n_models=n_models, n_scenarios=n_scenarios, seed=seed)
    cells, _ = simulated_cells(n_models=n_models, n_scenarios=n_scenarios, seed=seed)
    ranks = inf.rank_uncertainty(cells, n_boot=n_boot, seed=seed)
    return _covered(ranks, truth.set_index("condition").true_accuracy)


def report(name: str, results: list[tuple[bool, float]], seconds: float) -> None:
    joint = np.array([j for j, _ in results], dtype=float)
    marginal = np.array([m for _, m in results])
    c, n = joint.mean(), len(joint)
    print(
        f"{name}: draws {n}, simultaneous coverage {c:.3f} (MC SE {np.sqrt(c * (1 - c) / n):.3f}), "
        f"marginal coverage {marginal.mean():.3f} (MC SE {marginal.std(ddof=1) / np.sqrt(n):.3f}), "
        f"{seconds / n:.2f} s per draw",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--boot", type=int, default=inf.N_BOOT)
    parser.add_argument("--models", type=int, default=15)
    parser.add_argument("--scenarios", type=int, nargs="+", default=[106, 40])
    parser.add_argument("--conditions", type=int, default=30)
    parser.add_argument("--trials", type=int, default=530)
    parser.add_argument("--rates", type=float, nargs=2, default=[0.6, 0.9])
    parser.add_argument("--only", choices=["counts", "simulator"], default=None)
    args = parser.parse_args()
    if args.only in (None, "counts"):
        rng = np.random.default_rng(1)
        for truth_from in ("uniform", "release"):
            start = time.perf_counter()
            results = []
            for d in range(args.draws):
                if truth_from == "uniform":
                    truth = pd.Series(rng.uniform(*args.rates, size=args.conditions))
                    truth.index = [f"c{i:02d}" for i in range(args.conditions)]
                else:
                    truth = release_rates()
                results.append(counts_draw(rng, truth, args.trials, args.boot, 100 + d))
            what = (
                f"rates U{tuple(args.rates)}"
                if truth_from == "uniform"
                else "rates = the release's published mean-trial accuracies"
            )
            report(
                f"counts ({len(truth)} conditions, {args.trials} trials, {what}, B={args.boot})",
                results,
                time.perf_counter() - start,
            )
    if args.only in (None, "simulator"):
        for n_scenarios in args.scenarios:
            start = time.perf_counter()
            results = [
                simulator_draw(args.models, n_scenarios, args.boot, 1000 + d)
                for d in range(args.draws)
            ]
            report(
                f"simulator ({2 * args.models} conditions, {n_scenarios} scenarios, 5 trials, "
                f"B={args.boot})",
                results,
                time.perf_counter() - start,
            )


if __name__ == "__main__":
    main()
