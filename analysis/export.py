"""``make export``: the trials, cells, conditions and scenarios tables as Parquet and CSV.

``python -m analysis.export [OUT_DIR]`` writes ``<name>.parquet`` and ``<name>.csv`` for each
table under ``paths.PROCESSED_DIR`` (or ``OUT_DIR``). Files are written to a temporary folder
beside the destination first and then moved into place, so a failed export leaves the previous
files untouched.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from analysis import paths as project_paths
from analysis.scoring import condition_scores, score_cells
from analysis.verdicts import load_trials

TABLES: tuple[str, ...] = ("trials", "cells", "conditions", "scenarios")
FORMATS: tuple[str, ...] = ("parquet", "csv")


def build_tables(
    trials: pd.DataFrame | None = None, scenarios: pd.DataFrame | None = None
) -> dict[str, pd.DataFrame]:
    """The exported tables; ``trials`` / ``scenarios`` default to ``load_trials()`` and
    ``analysis.scenarios.load_scenarios()``."""
    if scenarios is None:
        from analysis.scenarios import load_scenarios

        scenarios = load_scenarios()
    if trials is None:
        trials = load_trials(scenarios=scenarios)
    cells = score_cells(trials, scenarios)
    return {
        "trials": trials,
        "cells": cells,
        "conditions": condition_scores(cells),
        "scenarios": scenarios,
    }


def write_tables(
    tables: dict[str, pd.DataFrame], out_dir: str | os.PathLike[str] | None = None
) -> list[Path]:
    """Write each table as Parquet and CSV into ``out_dir`` (default ``paths.PROCESSED_DIR``)
    via a temporary folder; returns the written paths."""
    out = Path(out_dir) if out_dir is not None else project_paths.PROCESSED_DIR
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        staged = []
        for name, table in tables.items():
            parquet = staging / f"{name}.parquet"
            csv = staging / f"{name}.csv"
            table.to_parquet(parquet, index=False)
            table.to_csv(csv, index=False)
            staged += [parquet, csv]
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for path in staged:
            target = out / path.name
            os.replace(path, target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def export(
    out_dir: str | os.PathLike[str] | None = None,
    *,
    trials: pd.DataFrame | None = None,
    scenarios: pd.DataFrame | None = None,
) -> list[Path]:
    """Build and write every exported table; returns the written paths."""
    return write_tables(build_tables(trials, scenarios), out_dir)


def main(argv: list[str] | None = None) -> int:
    """Command line entry: ``python -m analysis.export [OUT_DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m analysis.export", description=__doc__)
    parser.add_argument("out_dir", nargs="?", help="output folder (default: data/processed)")
    written = export(parser.parse_args(sys.argv[1:] if argv is None else argv).out_dir)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
