"""Every location the project reads or writes, in one place.

The release location is a setting: ``RELEASE_DIR`` in the environment (or the
``release_dir`` argument of the functions that take one), defaulting to
``../shared/steerbench-work`` beside the project.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RELEASE_DIR = PROJECT_ROOT.parent / "shared" / "steerbench-work"

RELEASE = "v2026-05"
SCENARIO_SET = "steerbench-work-2026-05"

# Inside a release repository (the public layout).
RELEASE_SCENARIO_SUBDIR = Path("scenario-sets") / SCENARIO_SET
RELEASE_RESULTS_SUBDIR = Path("results") / RELEASE
RELEASE_PARITY_VECTORS = Path("integrations") / "tinker" / "parity-vectors.json"
RELEASE_SAMPLE_ARTIFACTS = Path("sample-artifacts")

# Inside this project, after `make data` (``STEERBENCH_DATA_DIR`` moves it, e.g. for tests).
DATA_DIR = Path(os.environ.get("STEERBENCH_DATA_DIR") or PROJECT_ROOT / "data")
SCENARIOS_DIR = DATA_DIR / "scenarios"
RUNS_DIR = DATA_DIR / "runs"
RESULTS_DIR = RUNS_DIR / RELEASE
SAMPLE_RUN_DIR = RUNS_DIR / "sample-artifacts"
REFERENCE_RUNS_DIR = RUNS_DIR / "reference-gates"
PROCESSED_DIR = DATA_DIR / "processed"
PARITY_VECTORS = SCENARIOS_DIR / "parity-vectors.json"
IMPORT_STAMP = DATA_DIR / ".imported"

PAPER_DIR = PROJECT_ROOT / "paper"
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
FIGURE_STYLE = PROJECT_ROOT / "figures" / "steerbench.mplstyle"


def release_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The release folder: ``override``, else ``$RELEASE_DIR``, else the default."""
    chosen = override or os.environ.get("RELEASE_DIR") or DEFAULT_RELEASE_DIR
    return Path(chosen).expanduser().resolve()
