"""Coverage of each interval method over simulated releases with scenario random effects.

Each replication draws a release from ``analysis.inference.simulate`` (fixed condition and
pattern effects, new scenario and cell effects, 5 trials per cell) and asks whether each
method's 95% interval holds the true population value. Wilson on trials, and Newcombe's
unpaired interval, treat trials (or cells) as independent and should under-cover; the
scenario-clustered methods should come near 95%. Also times every bootstrap method on one
release-sized input (30 conditions x 106 scenarios x 5 trials).

Run: ``.venv/bin/python benchmarks/bench_coverage.py [--reps 500]``.
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
from analysis.scoring import score_cells

N_SCENARIOS = 106
N_TRIALS = 5
SCENARIO_SD = 1.2
CELL_SD = 0.8
N_BOOT = 2000
SEED = 20260530
#: Two models at floor and high: logits of (m1 off, m1 high, m2 off, m2 high).
CONDITION_LOGITS = np.array([0.4, 0.9, 1.0, 1.1])
CONDITIONS = ["m1 (off)", "m1 (high)", "m2 (off)", "m2 (high)"]


def truths(pattern_index: np.ndarray) -> dict:
    """True population values: mean-trial and modal accuracy per condition, per pattern."""
    sd = float(np.hypot(SCENARIO_SD, CELL_SD))
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


def replicate(rng: np.random.Generator, pattern_index, scenarios, truth, seed: int) -> list:
    """(method, quantity, covered, width) rows of one simulated release."""
    effects = np.array([b for _, _, b, _ in PATTERN_MIX])[pattern_index]
    correct = simulate_counts(
        rng,
        CONDITION_LOGITS,
        effects,
        n_trials=N_TRIALS,
        scenario_sd=SCENARIO_SD,
        cell_sd=CELL_SD,
    )
    cells = cells_from_counts(correct, scenarios["boundary_pattern"].to_numpy())
    rows = []

    def add(method, quantity, low, high, true):
        rows.append((method, quantity, bool(low <= true <= high), float(high - low)))

    by_condition = {c: i for i, c in enumerate(CONDITIONS)}
    clustered = inf.clustered_accuracy(cells, n_boot=N_BOOT, seed=seed)
    for r in clustered.itertuples():
        true = truth["accuracy"][by_condition[r.condition]]
        add("Wilson on trials", "mean-trial accuracy", r.wilson_low, r.wilson_high, true)
        add("scenario-cluster bootstrap", "mean-trial accuracy", r.ci_low, r.ci_high, true)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gee = inf.gee_accuracy(cells)
    for r in gee.itertuples():
        true = truth["accuracy"][by_condition[r.condition]]
        add("GEE exchangeable", "mean-trial accuracy", r.ci_low, r.ci_high, true)

    paired = inf.paired_accuracy_difference(cells, n_boot=N_BOOT, seed=seed)
    modal = inf.paired_binary_difference(cells, "modal_accuracy")
    for model, (floor, high) in {"m1": (0, 1), "m2": (2, 3)}.items():
        true = truth["accuracy"][high] - truth["accuracy"][floor]
        row = paired[paired.contrast.str.startswith(model)].iloc[0]
        add("paired scenario bootstrap", "accuracy difference", row.ci_low, row.ci_high, true)
        n = N_TRIALS * correct.shape[1]
        low, hi = confint_proportions_2indep(
            correct[high].sum(), n, correct[floor].sum(), n, method="newcomb"
        )
        add("Newcombe unpaired on trials", "accuracy difference", low, hi, true)
        true = truth["modal"][high] - truth["modal"][floor]
        row = modal[modal.contrast.str.startswith(model)].iloc[0]
        add(
            "Newcombe paired (McNemar pairs)",
            "modal accuracy difference",
            row.ci_low,
            row.ci_high,
            true,
        )
        m = correct.shape[1]
        k1, k0 = (correct[high] > 2).sum(), (correct[floor] > 2).sum()
        low, hi = confint_proportions_2indep(k1, m, k0, m, method="newcomb")
        add("Newcombe unpaired on cells", "modal accuracy difference", low, hi, true)

    pooled = inf.pooled_pattern_accuracy(cells, scenarios, n_boot=N_BOOT, seed=seed)
    names = [name for name, _, _, _ in PATTERN_MIX]
    for r in pooled.itertuples():
        name = r.quantity.removeprefix("modal accuracy: ")
        if r.n_clusters < 10:
            continue
        true = truth["pattern_modal"][names.index(name)]
        add(
            "Wilson on pooled cells",
            "pooled modal accuracy per pattern",
            r.wilson_low,
            r.wilson_high,
            true,
        )
        add(
            "scenario-cluster bootstrap",
            "pooled modal accuracy per pattern",
            r.ci_low,
            r.ci_high,
            true,
        )
    return rows


def coverage(reps: int) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    pattern_index = _patterns(N_SCENARIOS)
    names = np.array([name for name, _, _, _ in PATTERN_MIX])[pattern_index]
    scenarios = pd.DataFrame(
        {"scenario_id": [f"s{i:03d}" for i in range(N_SCENARIOS)], "boundary_pattern": names}
    )
    truth = truths(pattern_index)
    rows = []
    for rep in range(reps):
        rows.extend(replicate(rng, pattern_index, scenarios, truth, SEED + rep))
    frame = pd.DataFrame(rows, columns=["method", "quantity", "covered", "width"])
    table = (
        frame.groupby(["quantity", "method"], sort=False)
        .agg(coverage=("covered", "mean"), mean_width=("width", "mean"), n=("covered", "size"))
        .reset_index()
    )
    table["replications"] = reps
    return table


def release_sized_timing() -> tuple[float, float]:
    """(wall, CPU) seconds for every bootstrap method on 30 conditions x 106 scenarios x 5
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
        "--reps", type=int, default=500, help="simulated releases per setting (default 500)"
    )
    args = parser.parse_args()
    wall, cpu = release_sized_timing()
    print(
        f"Every bootstrap method (B = {inf.N_BOOT}) on 30 conditions x {N_SCENARIOS} "
        f"scenarios x {N_TRIALS} trials: {wall:.2f} s wall, {cpu:.2f} s CPU (target < 5 s)"
    )
    started = time.perf_counter()
    table = coverage(args.reps)
    print(
        f"\nCoverage of nominal 95% intervals, {args.reps} replications "
        f"(scenario sd {SCENARIO_SD}, cell sd {CELL_SD} on the logit scale, "
        f"B = {N_BOOT}), {time.perf_counter() - started:.0f} s:\n"
    )
    shown = table.assign(
        coverage=table.coverage.map(lambda v: f"{100 * v:.1f}%"),
        mean_width=table.mean_width.map(lambda v: f"{100 * v:.1f} pts"),
    )
    print(shown.to_markdown(index=False))


if __name__ == "__main__":
    main()
