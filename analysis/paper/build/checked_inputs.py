"""What the build's input check hands the notebooks: the checked frames, stored in the staging
folder, given as a papermill parameter to every section that reads them."""

from __future__ import annotations

from pathlib import Path

#: Where the build keeps the checked inputs it hands its notebooks, inside the staging
#: folder's ``.parts`` (removed before ``paper/`` is replaced).
CHECKED_INPUTS = "checked-inputs.pkl"


def reads_checked(notebook: Path) -> bool:
    """Whether ``notebook``'s section reads what the input check hands on: the published
    conditions or the per-trial verdicts (a notebook of no known section may read them)."""
    from analysis.paper.sections.reads import READS

    reads = READS.get(notebook.stem)
    return reads is None or reads.conditions or reads.verdicts


def notebook_parameters(notebook: Path, staging: Path, checked: Path | None) -> dict:
    """The papermill parameters of ``notebook``: its output folder and, for a section that
    reads the conditions or the verdicts, the checked inputs."""
    from analysis.paper.sections.reads import READS

    parameters = {"output_dir": str(staging)}
    if checked is not None and notebook.stem in READS and reads_checked(notebook):
        parameters["checked_inputs"] = str(checked)
    return parameters
