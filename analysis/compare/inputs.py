"""What the comparison reads from one release's build: its scenarios (file hashes,
labels, rendered messages), its published conditions as counts, their per-trial verdicts
when the release has them, and the build's ``numbers.json`` and claims ledger."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.compare.builds import ReleaseBuild
from analysis.corpus.render import render_folder
from analysis.corpus.scenarios import load_scenarios
from analysis.files.reading import read_json
from analysis.scoring.breakdowns import PUBLISHED
from analysis.scoring.crosscheck import load_checked_cells
from analysis.scoring.leaderboard import load_conditions


@dataclass(frozen=True)
class BuildInputs:
    """One built release, read for the comparison."""

    build: ReleaseBuild
    scenarios: pd.DataFrame  # load_scenarios, plus sha256 and user_message
    conditions: pd.DataFrame  # load_conditions: the published conditions as counts
    cells: pd.DataFrame | None  # scored published cells, None without per-trial verdicts
    trials: pd.DataFrame | None  # their trials
    numbers: dict
    claims: pd.DataFrame


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


#: The claims ledger's columns the comparison reads.
CLAIM_COLUMNS = [
    "section",
    "statement",
    "name",
    "published",
    "recomputed",
    "status",
    "difference",
]


def _claims(path: Path) -> pd.DataFrame:
    """The build's claims ledger; empty when the build has none (another release than the
    one the paper's published values are of)."""
    if not path.is_file():
        return pd.DataFrame(columns=CLAIM_COLUMNS, dtype=str)
    ledger = pd.read_csv(path, dtype=str, keep_default_na=False)
    return ledger.reindex(columns=CLAIM_COLUMNS, fill_value="")


def read_build(build: ReleaseBuild) -> BuildInputs:
    """Read what the comparison needs from ``build`` (already imported and built)."""
    data = build.data
    scenario_dir, results = paths.scenarios_dir(data), paths.results_dir(data)
    scenarios = load_scenarios(scenario_dir, results)
    ids = scenarios["scenario_id"].astype(str)
    scenarios["sha256"] = [_sha256(scenario_dir / f"{sid}.json") for sid in ids]
    rendered = render_folder(scenario_dir, ids)
    scenarios["user_message"] = [rendered[sid].user_input for sid in ids]
    conditions = load_conditions(scenarios, results)
    trials, cells = load_checked_cells(
        scenarios, results_dir=results, runs_dir=paths.runs_dir(data), conditions=conditions
    )
    published = cells["source"].astype(str) == PUBLISHED
    trials_published = trials["source"].astype(str) == PUBLISHED
    has_verdicts = bool(published.any())
    numbers = read_json(build.paper / "numbers.json")
    return BuildInputs(
        build=build,
        scenarios=scenarios,
        conditions=conditions,
        cells=cells.loc[published].reset_index(drop=True) if has_verdicts else None,
        trials=trials.loc[trials_published].reset_index(drop=True) if has_verdicts else None,
        numbers=numbers.get("numbers", {}),
        claims=_claims(build.paper / "tables" / "claims.csv"),
    )
