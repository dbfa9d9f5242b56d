"""What each notebook section reads: the declarations the build and :func:`open_section`
share (standard library only, so that the build reads them without importing pandas).

Every section reads the scenario table; :data:`READS` says what else: the published
conditions (``leaderboard.json``, after the leaderboard cross-check), the per-trial verdicts
(cross-checked, scored into cells and pooled), and release files the section reads itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from analysis import paths
from analysis.files.parts import HUMAN_AGREEMENT, HUMAN_LABELS, LLM_AUDIT


@dataclass(frozen=True)
class Reads:
    """What a section reads beside the scenario table."""

    #: The published conditions (``leaderboard.json`` and the release manifest).
    conditions: bool = False
    #: The per-trial verdicts, scored into cells.
    verdicts: bool = False
    #: Other files of the release's results folder the section reads itself.
    results_files: tuple[str, ...] = ()


#: Agreement reports and gold labels that the label-provenance section reads.
LABEL_FILES = (HUMAN_LABELS.file, HUMAN_AGREEMENT.file, LLM_AUDIT.file)

#: What each notebook section reads.
READS: dict[str, Reads] = {
    "01-corpus": Reads(),
    "02-leaderboard": Reads(conditions=True, verdicts=True),
    "03-direction": Reads(conditions=True),
    "04-reasoning": Reads(conditions=True),
    "05-patterns": Reads(verdicts=True),
    "06-mirrors": Reads(verdicts=True),
    "07-stability": Reads(conditions=True, verdicts=True),
    "08-sensitivity": Reads(verdicts=True),
    "09-labels": Reads(results_files=LABEL_FILES),
    "10-inference": Reads(conditions=True, verdicts=True),
    "11-detectable": Reads(conditions=True, verdicts=True),
}


@dataclass(frozen=True)
class Locations:
    """Where a section's inputs are: the scenario files, the runs, the release's results."""

    scenarios: Path
    runs: Path
    results: Path

    @classmethod
    def of(cls, data_dir: str | os.PathLike[str] | None = None) -> Locations:
        """The locations under ``data_dir`` (None: the project's data folder)."""
        return cls(
            scenarios=paths.scenarios_dir(data_dir),
            runs=paths.runs_dir(data_dir),
            results=paths.results_dir(data_dir),
        )
