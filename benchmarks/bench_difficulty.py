"""Compare optimisers of the pattern-difficulty mixed model's posterior mode on simulated
releases, and print where each converged, how long it took, and how far apart the estimates
lie.

Run from the project root: ``.venv/bin/python benchmarks/bench_difficulty.py``. On a grid of
simulated releases (``--models`` models at two reasoning settings each, ``--scenarios``
scenarios, ``--seeds`` seeds), and on a generated 224-condition release as
``bench_paper.py`` writes it (``--large``, off by default: it takes a minute to write), it
fits :func:`analysis.inference.pattern_difficulty` (``method="bayes"``) with the project's
optimiser (:data:`analysis.inference.difficulty.OPTIMIZER` and its options) and with the
other one given (default ``BFGS``, statsmodels' default, with scipy's own options and the
same iteration limit),
one BLAS thread each, as the build's kernels run. A fit converged when the largest
gradient component of the log posterior is at most ``GRADIENT_TOLERANCE`` (the function
refuses the others). It prints, per release, each fit's seconds and status; then the fits
each optimiser converged on, their total seconds, and the largest difference between the
two optimisers' log odds ratios and interval bounds where both converged.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads: one thread, as a kernel

import numpy as np
import pandas as pd

from analysis.help_text import parser as help_parser
from analysis.inference import difficulty
from analysis.inference.simulate import simulated_cells


def fitted(cells: pd.DataFrame, scenarios: pd.DataFrame, optimizer: str, options: dict):
    """(table or None, seconds, the refusal's first words) of one fit with ``optimizer``."""
    saved = difficulty.OPTIMIZER, difficulty.OPTIMIZER_OPTIONS
    difficulty.OPTIMIZER, difficulty.OPTIMIZER_OPTIONS = optimizer, options
    started = time.perf_counter()
    try:
        table = difficulty.pattern_difficulty(cells, scenarios, method="bayes")
    except ValueError as error:
        return None, time.perf_counter() - started, str(error)[:70]
    finally:
        difficulty.OPTIMIZER, difficulty.OPTIMIZER_OPTIONS = saved
    return table, time.perf_counter() - started, "ok"


def log_gap(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """The largest difference of log odds ratio or log interval bound between two tables."""
    columns = ["estimate", "ci_low", "ci_high"]
    return float(np.max(np.abs(np.log(a[columns].to_numpy()) - np.log(b[columns].to_numpy()))))


def large_cells() -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """The published cells of a generated 224-condition release (``bench_paper.py``)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_paper import large_release

    from analysis.paper.sections.loading import load_inputs
    from analysis.paper.sections.reads import Locations, Reads

    with tempfile.TemporaryDirectory() as folder:
        env, _, _ = large_release(Path(folder), 224)
        where = Locations.of(env["STEERBENCH_DATA_DIR"])
        loaded = load_inputs(Reads(conditions=True, verdicts=True), where, None)
    cells = loaded.cells[loaded.cells["source"].astype(str) == "published"]
    return "generated, 224 conditions", cells, loaded.scenarios


def main(models: list[int], scenarios: list[int], seeds: list[int], other: str, large: bool):
    ours = (difficulty.OPTIMIZER, difficulty.OPTIMIZER_OPTIONS)
    theirs = (other, {})
    releases = [
        (
            f"{m} models, {s} scenarios, seed {seed}",
            *simulated_cells(n_models=m, n_scenarios=s, seed=seed),
        )
        for m in models
        for s in scenarios
        for seed in seeds
    ]
    if large:
        releases.append(large_cells())
    converged = {ours[0]: 0, theirs[0]: 0}
    seconds = {ours[0]: 0.0, theirs[0]: 0.0}
    gap = 0.0
    for name, cells, table_scenarios in releases:
        results = {}
        for optimizer, options in (ours, theirs):
            table, took, status = fitted(cells, table_scenarios, optimizer, options)
            results[optimizer] = table
            seconds[optimizer] += took
            converged[optimizer] += table is not None
            print(f"{name:36} {optimizer:9} {took:6.2f} s  {status}")
        if all(table is not None for table in results.values()):
            gap = max(gap, log_gap(*results.values()))
    print(f"over {len(releases)} releases:")
    for optimizer in converged:
        print(f"  {optimizer}: converged on {converged[optimizer]}, {seconds[optimizer]:.1f} s")
    print(f"  largest difference of log odds or log bound where both converged: {gap:.1e}")


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


if __name__ == "__main__":
    parser = help_parser("python benchmarks/bench_difficulty.py", __doc__)
    parser.add_argument(
        "--models", type=_ints, default=[1, 2, 5, 15, 40], help="models, comma-separated"
    )
    parser.add_argument(
        "--scenarios", type=_ints, default=[30, 60, 106], help="scenarios, comma-separated"
    )
    parser.add_argument("--seeds", type=_ints, default=[0, 1, 2], help="seeds, comma-separated")
    parser.add_argument("--other", default="BFGS", help="the optimiser compared (scipy name)")
    parser.add_argument("--large", action="store_true", help="add a 224-condition release")
    arguments = parser.parse_args()
    main(arguments.models, arguments.scenarios, arguments.seeds, arguments.other, arguments.large)
