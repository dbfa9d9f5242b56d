"""Every location the project reads or writes, in one place, worked out when asked.

Locations that can move are functions, resolved at each call: an argument first, then the
environment, then the default. The data folder is ``data_dir``'s argument, else
``$STEERBENCH_DATA_DIR``, else ``data/`` in the project; the release is ``$RELEASE_DIR``,
else ``../shared/steerbench-work`` beside the project.

The release's version (``v2026-05``) and scenario-set folder are not fixed here: they come
from the release itself (its ``results/<version>/release-manifest.json``) and, once it is
imported, from the import stamp ``data/.imported``. This module imports only the standard
library (and :mod:`analysis.files.reading`), so the no-op check of ``make paper`` starts fast.
"""

from __future__ import annotations

import os
from pathlib import Path

from analysis.files.reading import InputFileError, read_json

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RELEASE_DIR = PROJECT_ROOT.parent / "shared" / "steerbench-work"
PAPER_DIR = PROJECT_ROOT / "paper"
#: Where ``make compare`` writes comparisons and keeps each release's build (``.builds/``).
COMPARE_DIR = PROJECT_ROOT / "compare"
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
FIGURE_STYLE = PROJECT_ROOT / "figures" / "steerbench.mplstyle"

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
REFERENCE_RUNS_NAME = "reference-policies"

PathLike = str | os.PathLike[str]


def data_dir(data: PathLike | None = None) -> Path:
    """The project's data folder: ``data``, else ``$STEERBENCH_DATA_DIR``, else ``data/``."""
    return Path(data or os.environ.get("STEERBENCH_DATA_DIR") or PROJECT_ROOT / "data")


def release_dir(override: PathLike | None = None) -> Path:
    """The release folder: ``override``, else ``$RELEASE_DIR``, else the default."""
    chosen = override or os.environ.get("RELEASE_DIR") or DEFAULT_RELEASE_DIR
    return Path(chosen).expanduser().resolve()


def import_stamp(data: PathLike | None = None) -> Path:
    """The stamp the release import writes last: ``data/.imported``."""
    return data_dir(data) / ".imported"


def imported_release(data: PathLike | None = None) -> dict:
    """The import stamp's record (empty when nothing valid is imported)."""
    try:
        record = read_json(import_stamp(data))
    except InputFileError:
        return {}
    return record if isinstance(record, dict) else {}


def release(data: PathLike | None = None) -> str:
    """The imported release's version (the default before the first import)."""
    return imported_release(data).get("release") or DEFAULT_RELEASE


def scenario_set(data: PathLike | None = None) -> str:
    """The imported release's scenario-set name (the default before the first import)."""
    return imported_release(data).get("scenario_set") or DEFAULT_SCENARIO_SET


def release_scenario_subdir(data: PathLike | None = None) -> Path:
    """``scenario-sets/<set>`` inside a release repository, for the imported set."""
    return RELEASE_SCENARIO_ROOT / scenario_set(data)


def scenarios_dir(data: PathLike | None = None) -> Path:
    """The imported scenario files: ``data/scenarios``."""
    return data_dir(data) / "scenarios"


def parity_vectors(data: PathLike | None = None) -> Path:
    """The imported parser parity vectors: ``data/scenarios/parity-vectors.json``."""
    return scenarios_dir(data) / "parity-vectors.json"


def runs_dir(data: PathLike | None = None) -> Path:
    """Every per-trial layout the loaders discover: ``data/runs``."""
    return data_dir(data) / "runs"


def results_dir(data: PathLike | None = None) -> Path:
    """The imported release's results: ``data/runs/<version>``."""
    return runs_dir(data) / release(data)


def release_manifest(data: PathLike | None = None) -> Path:
    """The imported release manifest: ``data/runs/<version>/release-manifest.json``."""
    return results_dir(data) / RELEASE_MANIFEST


def sample_run_dir(data: PathLike | None = None) -> Path:
    """The release's sample run root: ``data/runs/sample-artifacts``."""
    return runs_dir(data) / SAMPLE_RUN_NAME


def reference_runs_dir(data: PathLike | None = None) -> Path:
    """The committed reference-policy runs: ``data/runs/reference-policies``."""
    return runs_dir(data) / REFERENCE_RUNS_NAME


def processed_dir(data: PathLike | None = None) -> Path:
    """Where ``make export`` writes: ``data/processed``."""
    return data_dir(data) / "processed"
