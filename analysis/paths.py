"""Every location the project reads or writes, in one place.

The release location is a setting: ``RELEASE_DIR`` in the environment (or the
``release_dir`` argument of the functions that take one), defaulting to
``../shared/steerbench-work`` beside the project.

The release's version (``v2026-05``) and scenario-set folder are not fixed here: they come
from the release itself (its ``results/<version>/release-manifest.json``) and, once it is
imported, from the import stamp ``data/.imported``. This module imports only the standard
library, so the no-op check of ``make paper`` starts fast.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RELEASE_DIR = PROJECT_ROOT.parent / "shared" / "steerbench-work"

#: Used only when nothing is imported yet and no release names its own version.
DEFAULT_RELEASE = "v2026-05"
DEFAULT_SCENARIO_SET = "steerbench-work-2026-05"

# Inside a release repository (the public layout).
RELEASE_RESULTS_ROOT = Path("results")
RELEASE_SCENARIO_ROOT = Path("scenario-sets")
RELEASE_MANIFEST = "release-manifest.json"
RELEASE_PARITY_VECTORS = Path("integrations") / "tinker" / "parity-vectors.json"
RELEASE_SAMPLE_ARTIFACTS = Path("sample-artifacts")
SAMPLE_RUN_NAME = RELEASE_SAMPLE_ARTIFACTS.name


def data_dir() -> Path:
    """The project's data folder: ``$STEERBENCH_DATA_DIR``, else ``data/`` (read per call)."""
    return Path(os.environ.get("STEERBENCH_DATA_DIR") or PROJECT_ROOT / "data")


def import_stamp(data: Path | None = None) -> Path:
    """The stamp the release import writes last: ``data/.imported``."""
    return (data or data_dir()) / ".imported"


def imported_release(data: Path | None = None) -> dict:
    """The import stamp's record (empty when nothing valid is imported)."""
    try:
        record = json.loads(import_stamp(data).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def release_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The release folder: ``override``, else ``$RELEASE_DIR``, else the default."""
    chosen = override or os.environ.get("RELEASE_DIR") or DEFAULT_RELEASE_DIR
    return Path(chosen).expanduser().resolve()


DATA_DIR = data_dir()
_IMPORTED = imported_release(DATA_DIR)

#: The imported release's version and scenario-set name (defaults before the first import).
RELEASE = _IMPORTED.get("release") or DEFAULT_RELEASE
SCENARIO_SET = _IMPORTED.get("scenario_set") or DEFAULT_SCENARIO_SET

# Inside a release repository, for the imported release's version.
RELEASE_SCENARIO_SUBDIR = RELEASE_SCENARIO_ROOT / SCENARIO_SET
RELEASE_RESULTS_SUBDIR = RELEASE_RESULTS_ROOT / RELEASE

# Inside this project, after `make data` (``STEERBENCH_DATA_DIR`` moves it, e.g. for tests).
SCENARIOS_DIR = DATA_DIR / "scenarios"
RUNS_DIR = DATA_DIR / "runs"
RESULTS_DIR = RUNS_DIR / RELEASE
SAMPLE_RUN_DIR = RUNS_DIR / SAMPLE_RUN_NAME
REFERENCE_RUNS_DIR = RUNS_DIR / "reference-policies"
PROCESSED_DIR = DATA_DIR / "processed"
PARITY_VECTORS = SCENARIOS_DIR / "parity-vectors.json"

PAPER_DIR = PROJECT_ROOT / "paper"
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
FIGURE_STYLE = PROJECT_ROOT / "figures" / "steerbench.mplstyle"
