"""Per-trial verdicts from every layout, as one tidy trials table.

- ``schema``: the trials table's columns and dtypes, and the checks every reader's rows pass
  (``normalize_trials``);
- one reader per layout: the release's ``scenarios-detail.json`` (``detail``), a raw run root
  (``run_root``), tidy Parquet / CSV / JSON Lines tables (``tidy``) and Inspect AI logs
  (``inspect_log``);
- ``discovery``: everything under ``data/runs`` (``load_trials(runs_dir=...)``).

``analysis.exploring.export.write_scenarios_detail`` writes a trials table back in the release
format.

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.corpus`.
"""

from analysis.trials.detail import (
    DETAIL_FILENAME,
    load_scenarios_detail,
    load_scenarios_detail_cells,
)
from analysis.trials.discovery import (
    NoPublishedVerdictsWarning,
    VerdictPaths,
    discover_runs,
    load_trials,
    verdict_path_list,
)
from analysis.trials.run_root import load_run_root, run_condition
from analysis.trials.schema import (
    CELL_KEYS,
    TRIAL_COLUMNS,
    VerdictError,
    combine_trials,
    empty_trials,
    normalize_trials,
    split_condition_label,
)
from analysis.trials.tidy import TIDY_SUFFIXES, load_tidy

__all__ = [
    "CELL_KEYS",
    "DETAIL_FILENAME",
    "TIDY_SUFFIXES",
    "TRIAL_COLUMNS",
    "NoPublishedVerdictsWarning",
    "VerdictError",
    "VerdictPaths",
    "combine_trials",
    "discover_runs",
    "empty_trials",
    "load_run_root",
    "load_scenarios_detail",
    "load_scenarios_detail_cells",
    "load_tidy",
    "load_trials",
    "normalize_trials",
    "run_condition",
    "split_condition_label",
    "verdict_path_list",
]
