"""Time the path the notebooks use: ``load_trials`` on a release's ``scenarios-detail.json``.

Run from the project root: ``.venv/bin/python benchmarks/bench_scoring.py``. It writes, with
the project's own writer (``analysis.exploring.export.write_scenarios_detail``), a release-format
verdict file of the imported release's scenarios x ``--conditions`` conditions x 5 trials
(512 conditions: 271,360 trials on v2026-05's 106 scenarios), and the same trials as a
Parquet table, then times for each file:

- ``load_trials`` in this process (the stack already imported), then ``score_cells`` and
  ``condition_scores`` on what it loaded;
- a whole process: interpreter start, imports, ``load_scenarios`` and ``load_trials``.

Target: load + score under 10 s in-process.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import paths
from analysis.corpus.scenarios import load_scenarios
from analysis.exploring.export import write_scenarios_detail
from analysis.help_text import parser as help_parser
from analysis.scoring.rules import condition_scores, score_cells
from analysis.trials import load_trials, normalize_trials

N_CONDITIONS = 512
N_TRIALS = 5
SEED = 20260507

WHOLE_PROCESS = """\
import sys
from analysis.corpus.scenarios import load_scenarios
from analysis.trials import load_trials
load_trials([sys.argv[1]], scenarios=load_scenarios())
"""


def make_trials(scenarios: pd.DataFrame, n_conditions: int, seed: int = SEED) -> pd.DataFrame:
    """Seeded trials of ``n_conditions`` conditions on every scenario: right with a
    condition- and scenario-dependent chance, a few with no decision, a few cells filtered."""
    rng = np.random.default_rng(seed)
    ids = scenarios["scenario_id"].astype(str).to_numpy()
    required = scenarios["required_gate"].astype(str).to_numpy()
    other = np.where(required == "allowed", "blocked", "allowed")
    shape = (n_conditions, len(ids), N_TRIALS)
    skill = rng.normal(1.0, 0.6, n_conditions)[:, None, None]
    ease = rng.normal(0.0, 1.2, len(ids))[None, :, None]
    right = rng.random(shape) < 1 / (1 + np.exp(-(skill + ease)))
    permission = np.where(right, required[None, :, None], other[None, :, None]).astype(object)
    permission[rng.random(shape) < 0.02] = None
    status = np.where(pd.isna(permission), "parse_failed", "ok").astype(object)
    filtered = np.repeat(rng.random(shape[:2]) < 0.002, N_TRIALS).reshape(shape)
    permission[filtered], status[filtered] = None, "provider_filtered"
    c, s, t = np.indices(shape).reshape(3, -1)
    models = np.array([f"model-{i // 2:03d}" for i in range(n_conditions)])
    reasoning = np.array(["off", "high"])[np.arange(n_conditions) % 2]
    frame = pd.DataFrame(
        {
            "scenario_id": ids[s],
            "model": models[c],
            "reasoning": reasoning[c],
            "trial": t + 1,
            "commit_permission": permission.ravel(),
            "status": status.ravel(),
        }
    )
    return normalize_trials(frame, origin="benchmark trials", source="published")


def whole_process(path: Path) -> float:
    """Wall seconds of a fresh interpreter that imports the package and loads ``path``."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", WHOLE_PROCESS, str(path)], check=True, cwd=paths.PROJECT_ROOT
    )
    return time.perf_counter() - started


def main(n_conditions: int = N_CONDITIONS) -> None:
    scenarios = load_scenarios()
    trials = make_trials(scenarios, n_conditions)
    with tempfile.TemporaryDirectory() as tmp:
        detail = write_scenarios_detail(trials, scenarios, Path(tmp) / "scenarios-detail.json")
        parquet = Path(tmp) / "trials.parquet"
        trials.to_parquet(parquet, index=False)
        print(
            f"{len(trials):,} trials: {len(scenarios)} scenarios x {n_conditions} conditions "
            f"x {N_TRIALS}; scenarios-detail.json {detail.stat().st_size / 1e6:.0f} MB"
        )
        for name, path in (("scenarios-detail.json", detail), ("Parquet", parquet)):
            started = time.perf_counter()
            loaded = load_trials([path], scenarios=scenarios)
            loading = time.perf_counter() - started
            cells = score_cells(loaded, scenarios)
            scoring = time.perf_counter() - started - loading
            condition_scores(cells)
            total = time.perf_counter() - started
            assert len(loaded) == len(trials)
            process = whole_process(path)
            print(
                f"{name:<22} load_trials {loading:5.2f} s, + score_cells {scoring:5.2f} s, "
                f"+ condition_scores: {total:5.2f} s in-process (target < 10 s); "
                f"whole process (start, imports, load) {process:5.2f} s"
            )


if __name__ == "__main__":
    parser = help_parser("python benchmarks/bench_scoring.py", __doc__)
    parser.add_argument(
        "--conditions", type=int, default=N_CONDITIONS, help="conditions of the generated release"
    )
    main(parser.parse_args().conditions)
