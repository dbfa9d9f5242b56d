"""Time load_tidy + score_cells + condition_scores on 500 scenarios x 100 conditions x 5 trials.

Run: ``.venv/bin/python benchmarks/bench_scoring.py`` (target: under 10 s in total).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.scoring import condition_scores, score_cells
from analysis.trials import load_tidy
from analysis.vocabulary import GATE_BY_VERB, TIER_WEIGHT, required_gate, tier_weight

N_SCENARIOS = 500
N_CONDITIONS = 100
N_TRIALS = 5
SEED = 20260507


def make_tables(seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seeded synthetic (trials rows, scenarios) with nulls, ties and a few filtered cells."""
    rng = np.random.default_rng(seed)
    ids = np.array([f"scenario-{i:04d}" for i in range(N_SCENARIOS)])
    verbs = rng.choice(list(GATE_BY_VERB), size=N_SCENARIOS)
    classes = rng.choice(list(TIER_WEIGHT), size=N_SCENARIOS)
    scenarios = pd.DataFrame(
        {
            "scenario_id": ids,
            "expected_action": verbs,
            "required_gate": [required_gate(v) for v in verbs],
            "irreversibility": classes,
            "tier_weight": [tier_weight(c) for c in classes],
        }
    )
    models = [f"model-{i // 3:02d}" for i in range(N_CONDITIONS)]
    settings = ["off", "low", "high"]
    reasoning = [settings[i % 3] for i in range(N_CONDITIONS)]
    n_cells = N_SCENARIOS * N_CONDITIONS
    n = n_cells * N_TRIALS
    scenario_idx = np.repeat(np.arange(N_SCENARIOS), N_CONDITIONS * N_TRIALS)
    condition_idx = np.tile(np.repeat(np.arange(N_CONDITIONS), N_TRIALS), N_SCENARIOS)
    permission = rng.choice(
        np.array(["allowed", "blocked", None], dtype=object), size=n, p=[0.45, 0.45, 0.10]
    )
    status = np.where(pd.isna(permission), "parse_failed", "ok").astype(object)
    filtered_cells = rng.random(n_cells) < 0.002
    filtered = np.repeat(filtered_cells, N_TRIALS)
    permission[filtered] = None
    status[filtered] = "provider_filtered"
    trials = pd.DataFrame(
        {
            "scenario_id": ids[scenario_idx],
            "model": np.array(models)[condition_idx],
            "reasoning": np.array(reasoning)[condition_idx],
            "trial": np.tile(np.arange(1, N_TRIALS + 1), n_cells),
            "commit_permission": permission,
            "status": status,
            "source": "run",
        }
    )
    return trials, scenarios


def main() -> None:
    trials, scenarios = make_tables()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trials.parquet"
        trials.to_parquet(path, index=False)
        t0 = time.perf_counter()
        loaded = load_tidy(path, scenarios=scenarios)
        t1 = time.perf_counter()
        cells = score_cells(loaded, scenarios)
        t2 = time.perf_counter()
        scores = condition_scores(cells)
        t3 = time.perf_counter()
    ties = int(((cells["n_allowed"] == cells["n_blocked"]) & (cells["n_decided"] > 0)).sum())
    print(
        f"trials {len(loaded):,}  cells {len(cells):,}  conditions {len(scores)}  "
        f"tied cells {ties:,}  filtered cells {int(cells['provider_filtered'].sum())}"
    )
    print(f"load_tidy        {t1 - t0:6.2f} s")
    print(f"score_cells      {t2 - t1:6.2f} s")
    print(f"condition_scores {t3 - t2:6.2f} s")
    print(f"total            {t3 - t0:6.2f} s  (target < 10 s)")


if __name__ == "__main__":
    argparse.ArgumentParser(
        prog="python benchmarks/bench_scoring.py", description=__doc__
    ).parse_args()
    main()
