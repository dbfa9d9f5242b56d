"""Coverage of each interval method over simulated releases with scenario random effects.

Each replication draws a release from ``analysis.inference.simulate`` (fixed condition and
pattern effects, new scenario and cell effects, 5 trials per cell) and asks whether each
method's 95% interval holds the true population value. It runs over a grid of intraclass
correlations of the trials within a cell (latent logit scale: (scenario + cell variance) /
(that + pi^2 / 3), split between scenario and cell as 1.2 : 0.8) and of release sizes (106
scenarios, and fewer, so that patterns get small). Each coverage comes with its Monte Carlo
standard error (the spread over replications of each replication's share covered, as the
intervals of one replication share its scenarios), the ANOVA ICC the releases show on the
binary scale, and how many intervals were refused (NaN bounds: too few scenarios). Wilson
on trials, and Newcombe's unpaired interval, treat trials (or cells) as independent and
should under-cover; the scenario-clustered methods should come near 95%. Also times the
package's clustered methods on one release-sized input (30 conditions x 106 scenarios x
5 trials).

Run: ``.venv/bin/python benchmarks/bench_coverage.py [--reps 200] [--boot 2000]
[--icc 0.2 0.35 0.5 0.75] [--scenarios 106 40]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep

from analysis import inference as inf
from analysis.inference.simulate import PATTERN_MIX, _patterns, simulate_counts
from analysis.scoring.rules import score_cells

N_SCENARIOS = 106
N_TRIALS = 5
#: How the latent variance splits between the scenario and the cell effect.
SCENARIO_SHARE = 1.2**2 / (1.2**2 + 0.8**2)
ICCS = (0.2, 0.35, 0.5, 0.75)
#: ``clustered_accuracy(strata=...)``'s interval, as the table names it.
STRATIFIED = "clustered Clopper-Pearson, variance within pattern"
SIZES = (106, 40)
SEED = 20260530
#: Two models at floor and high: logits of (m1 off, m1 high, m2 off, m2 high).
CONDITION_LOGITS = np.array([0.4, 0.9, 1.0, 1.1])
CONDITIONS = ["m1 (off)", "m1 (high)", "m2 (off)", "m2 (high)"]


def effect_sds(icc: float) -> tuple[float, float]:
    """(scenario sd, cell sd) on the logit scale giving latent intraclass correlation ``icc``
    of the trials within a cell."""
    total = icc / (1 - icc) * np.pi**2 / 3
    return float(np.sqrt(total * SCENARIO_SHARE)), float(np.sqrt(total * (1 - SCENARIO_SHARE)))


def truths(pattern_index: np.ndarray, icc: float) -> dict:
    """True population values: mean-trial and modal accuracy per condition, per pattern."""
    sd = float(np.hypot(*effect_sds(icc)))
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()
    effects = np.array([b for _, _, b, _ in PATTERN_MIX])
    logit = CONDITION_LOGITS[:, None, None] + effects[None, :, None] + sd * nodes
    p = 1 / (1 + np.exp(-logit))
    accuracy = (weights * p).sum(-1)  # (condition, pattern)
    majority = (weights * stats.binom.sf(N_TRIALS // 2, N_TRIALS, p)).sum(-1)
    share = np.bincount(pattern_index, minlength=len(PATTERN_MIX)) / len(pattern_index)
    return {
        "accuracy": accuracy @ share,
        "modal": majority @ share,
        "pattern_modal": majority.mean(0),
    }


def cells_from_counts(correct: np.ndarray, pattern_names: np.ndarray) -> pd.DataFrame:
    """A minimal scored-cells table (every scenario a hold; modal = majority of 5)."""
    n_conditions, n_scenarios = correct.shape
    c = correct.ravel()
    modal_correct = c > N_TRIALS // 2
    return pd.DataFrame(
        {
            "source": "run",
            "condition": np.repeat(CONDITIONS, n_scenarios),
            "model": np.repeat([x.split(" ")[0] for x in CONDITIONS], n_scenarios),
            "reasoning": np.repeat([x.split("(")[1][:-1] for x in CONDITIONS], n_scenarios),
            "scenario_id": np.tile([f"s{i:03d}" for i in range(n_scenarios)], n_conditions),
            "n_trials": N_TRIALS,
            "n_correct": c,
            "modal_scored": True,
            "modal_correct": modal_correct,
            "modal_decision": np.where(modal_correct, "blocked", "allowed"),
            "required_gate": "blocked",
            "directionally_scored": True,
        }
    )


def replicate(rng, pattern_index, scenarios, truth, seed: int, icc: float, n_boot: int):
    """(method, quantity, covered, width, refused, icc estimate) rows of one simulated
    release; a refused interval (NaN bounds) counts as neither covered nor not."""
    effects = np.array([b for _, _, b, _ in PATTERN_MIX])[pattern_index]
    scenario_sd, cell_sd = effect_sds(icc)
    correct = simulate_counts(
        rng,
        CONDITION_LOGITS,
        effects,
        n_trials=N_TRIALS,
        scenario_sd=scenario_sd,
        cell_sd=cell_sd,
    )
    cells = cells_from_counts(correct, scenarios["boundary_pattern"].to_numpy())
    rows = []
    shown_icc = [np.nan]

    def add(method, quantity, low, high, true):
        if pd.isna(low) or pd.isna(high):
            rows.append((method, quantity, np.nan, np.nan, True, shown_icc[0]))
            return
        rows.append(
            (method, quantity, float(low <= true <= high), float(high - low), False, shown_icc[0])
        )

    by_condition = {c: i for i, c in enumerate(CONDITIONS)}
    clustered = inf.clustered_accuracy(cells, n_boot=n_boot, seed=seed)
    shown_icc[0] = float(clustered.icc.mean())
    for r in clustered.itertuples():
        true = truth["accuracy"][by_condition[r.condition]]
        add("Wilson on trials", "mean-trial accuracy", r.wilson_low, r.wilson_high, true)
        add(
            "clustered Clopper-Pearson (effective size)",
            "mean-trial accuracy",
            r.ci_low,
            r.ci_high,
            true,
        )
    strata = scenarios.set_index("scenario_id")["boundary_pattern"]
    stratified = inf.clustered_accuracy(cells, n_boot=n_boot, seed=seed, strata=strata)
    for r in stratified.itertuples():
        true = truth["accuracy"][by_condition[r.condition]]
        add(STRATIFIED, "mean-trial accuracy", r.ci_low, r.ci_high, true)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gee = inf.gee_accuracy(cells)
    for r in gee.itertuples():
        true = truth["accuracy"][by_condition[r.condition]]
        add(
            "GEE exchangeable, Clopper-Pearson (effective size)",
            "mean-trial accuracy",
            r.ci_low,
            r.ci_high,
            true,
        )

    paired = inf.paired_accuracy_difference(cells)
    modal = inf.paired_binary_difference(cells, "modal_accuracy")
    for model, (floor, high) in {"m1": (0, 1), "m2": (2, 3)}.items():
        true = truth["accuracy"][high] - truth["accuracy"][floor]
        row = paired[paired.contrast.str.startswith(model)].iloc[0]
        add(
            "paired t on scenario differences", "accuracy difference", row.ci_low, row.ci_high, true
        )
        n = N_TRIALS * correct.shape[1]
        low, hi = confint_proportions_2indep(
            correct[high].sum(), n, correct[floor].sum(), n, method="newcomb"
        )
        add("Newcombe unpaired on trials", "accuracy difference", low, hi, true)
        true = truth["modal"][high] - truth["modal"][floor]
        row = modal[modal.contrast.str.startswith(model)].iloc[0]
        add("Tango score (paired)", "modal accuracy difference", row.ci_low, row.ci_high, true)
        m = correct.shape[1]
        k1, k0 = (correct[high] > 2).sum(), (correct[floor] > 2).sum()
        low, hi = confint_proportions_2indep(k1, m, k0, m, method="newcomb")
        add("Newcombe unpaired on cells", "modal accuracy difference", low, hi, true)

    pooled = inf.pooled_pattern_accuracy(cells, scenarios, n_boot=n_boot, seed=seed)
    names = [name for name, _, _, _ in PATTERN_MIX]
    for r in pooled.itertuples():
        name = r.quantity.removeprefix("modal accuracy: ")
        true = truth["pattern_modal"][names.index(name)]
        quantity = f"pooled modal accuracy, pattern of {r.n_clusters} scenarios"
        add("Wilson on pooled cells", quantity, r.independent_low, r.independent_high, true)
        add("clustered Clopper-Pearson (effective size)", quantity, r.ci_low, r.ci_high, true)
    return rows


def coverage(reps: int, n_boot: int, iccs, sizes) -> pd.DataFrame:
    """One row per (scenarios, ICC, quantity, method): coverage, its Monte Carlo SE, mean
    width, intervals, refused intervals and the mean ANOVA ICC the releases showed."""
    rng = np.random.default_rng(SEED)
    frames = []
    for n_scenarios in sizes:
        pattern_index = _patterns(n_scenarios)
        names = np.array([name for name, _, _, _ in PATTERN_MIX])[pattern_index]
        scenarios = pd.DataFrame(
            {"scenario_id": [f"s{i:03d}" for i in range(n_scenarios)], "boundary_pattern": names}
        )
        for icc in iccs:
            truth = truths(pattern_index, icc)
            for rep in range(reps):
                rows = replicate(rng, pattern_index, scenarios, truth, SEED + rep, icc, n_boot)
                frame = pd.DataFrame(
                    rows, columns=["method", "quantity", "covered", "width", "refused", "icc_shown"]
                )
                frames.append(frame.assign(scenarios=n_scenarios, icc=icc, rep=rep))
    frame = pd.concat(frames, ignore_index=True)
    keys = ["scenarios", "icc", "quantity", "method"]
    per_rep = frame.groupby([*keys, "rep"], sort=False).covered.mean().reset_index()
    mc_se = per_rep.groupby(keys, sort=False).covered.agg(
        lambda v: v.std(ddof=1) / np.sqrt(v.count()) if v.count() > 1 else np.nan
    )
    table = (
        frame.groupby(keys, sort=False)
        .agg(
            coverage=("covered", "mean"),
            mean_width=("width", "mean"),
            intervals=("covered", "count"),
            refused=("refused", "sum"),
            anova_icc=("icc_shown", "mean"),
        )
        .join(mc_se.rename("mc_se"))
        .reset_index()
    )
    table["replications"] = reps
    return table


def release_sized_timing() -> tuple[float, float]:
    """(wall, CPU) seconds for the clustered methods on 30 conditions x 106 scenarios x 5
    trials."""
    trials, scenarios, _ = inf.simulate_release(n_models=15, n_scenarios=N_SCENARIOS, seed=1)
    cells = score_cells(trials, scenarios)
    started, cpu = time.perf_counter(), time.process_time()
    inf.paired_accuracy_difference(cells)
    inf.paired_binary_difference(cells, "modal_accuracy")
    inf.paired_binary_difference(cells, "over_refusal")
    inf.clustered_accuracy(cells)
    inf.pooled_pattern_accuracy(cells, scenarios)
    inf.pooled_mirror_gap(cells, scenarios)
    inf.pooled_direction_asymmetry(cells, scenarios)
    inf.pass_hat_k(cells)
    inf.rank_uncertainty(cells)
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reps", type=int, default=200, help="simulated releases per grid point (default 200)"
    )
    parser.add_argument(
        "--boot", type=int, default=2000, help="bootstrap resamples per interval (default 2000)"
    )
    parser.add_argument(
        "--icc",
        type=float,
        nargs="+",
        default=list(ICCS),
        help="latent intraclass correlations of the trials within a cell (default "
        + " ".join(map(str, ICCS))
        + ")",
    )
    parser.add_argument(
        "--scenarios",
        type=int,
        nargs="+",
        default=list(SIZES),
        help="scenarios per simulated release (default " + " ".join(map(str, SIZES)) + ")",
    )
    args = parser.parse_args()
    wall, cpu = release_sized_timing()
    print(
        f"The clustered methods (bootstraps at B = {inf.N_BOOT}) on 30 conditions x {N_SCENARIOS} "
        f"scenarios x {N_TRIALS} trials: {wall:.2f} s wall, {cpu:.2f} s CPU (target < 5 s)"
    )
    started = time.perf_counter()
    table = coverage(args.reps, args.boot, args.icc, args.scenarios)
    print(
        f"\nCoverage of nominal 95% intervals, {args.reps} replications per grid point "
        f"(latent ICC {', '.join(map(str, args.icc))}; {', '.join(map(str, args.scenarios))} "
        f"scenarios; B = {args.boot}), {time.perf_counter() - started:.0f} s; MC SE over "
        "replications; refused: NaN bounds (fewer than "
        f"{inf.MIN_CLUSTERS} scenarios):\n"
    )
    shown = table.assign(
        coverage=table.coverage.map(lambda v: "" if pd.isna(v) else f"{100 * v:.1f}%"),
        mc_se=table.mc_se.map(lambda v: "" if pd.isna(v) else f"{100 * v:.1f}"),
        mean_width=table.mean_width.map(lambda v: "" if pd.isna(v) else f"{100 * v:.1f} pts"),
        anova_icc=table.anova_icc.map(lambda v: f"{v:.2f}"),
    )
    columns = [
        "scenarios",
        "icc",
        "anova_icc",
        "quantity",
        "method",
        "coverage",
        "mc_se",
        "mean_width",
        "intervals",
        "refused",
    ]
    print(shown[columns].to_markdown(index=False))


if __name__ == "__main__":
    main()
