"""When notebooks failed: their partly executed copies kept in ``paper.failed/`` and the
error that names every failure."""

from __future__ import annotations

import shutil
from pathlib import Path

from analysis.paper.build.errors import NotebookFailed
from analysis.paper.build.notebook_run import NotebookRun


def _keep_failed(runs: list[NotebookRun], paper_dir: Path) -> Path:
    kept = paper_dir.with_name(paper_dir.name + ".failed")
    shutil.rmtree(kept, ignore_errors=True)
    kept.mkdir(parents=True)
    for run in runs:
        if run.failure and run.executed.is_file():
            shutil.copy2(run.executed, kept / run.executed.name)
    return kept


def raise_on_failure(runs: list[NotebookRun], paper_dir: Path) -> None:
    """Raise :class:`NotebookFailed` when any of ``runs`` failed: every failure, in the
    order of the notebooks' names, the first with where its partly executed copy is kept
    (the failed notebooks' copies go to ``paper.failed/`` beside ``paper_dir``)."""
    failed = sorted((run for run in runs if run.failure), key=lambda run: run.notebook.name)
    if failed:
        kept = _keep_failed(failed, paper_dir) / failed[0].executed.name
        where = (
            f"; the partly executed notebook is kept in {kept}"
            if kept.is_file()
            else "; it did not start, so nothing was kept"
        )
        raise NotebookFailed(
            f"notebook {failed[0].failure}{where}"
            + "".join(f"\n  also failed: {run.failure}" for run in failed[1:])
        )
