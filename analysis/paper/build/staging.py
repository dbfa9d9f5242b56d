"""The build itself, all or nothing: every notebook's outputs, ``numbers.json``, the reports
and the stamp gathered in a staging folder beside ``paper/``, which replaces ``paper/`` only
when every step succeeded."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from analysis import paths
from analysis.files.digests import file_sha256
from analysis.paper.build.carry_over import STAMP, carry_over, reusable_notebooks
from analysis.paper.build.checked_inputs import CHECKED_INPUTS
from analysis.paper.build.errors import BuildError
from analysis.paper.build.failures import raise_on_failure
from analysis.paper.build.reports import write_reports
from analysis.paper.build.scheduler import (
    CELL_TIMEOUT,
    NotebookRunner,
    longest_first,
    remember_seconds,
    report_line,
)
from analysis.paper.input_cache import data_key
from analysis.paper.make import build_digest, recover_paper, shared_digest


def check_writable(paper_dir: Path) -> None:
    """Refuse before any notebook runs when ``paper/`` or its parent cannot be written."""
    for folder in (paper_dir.parent, paper_dir):
        if not folder.is_dir():
            continue
        probe = folder / f".write-probe-{id(folder)}"
        try:
            probe.touch()
            probe.unlink()
        except OSError as error:
            raise BuildError(f"{folder}: not writable ({error.strerror})") from None


def _swap(staging: Path, paper_dir: Path) -> None:
    previous = paper_dir.with_name(paper_dir.name + ".previous")
    shutil.rmtree(previous, ignore_errors=True)
    if paper_dir.exists():
        paper_dir.rename(previous)
    staging.rename(paper_dir)
    shutil.rmtree(previous, ignore_errors=True)


def _collect(part: Path, staging: Path) -> list[str]:
    """Move one notebook's own output folder into ``staging``; its files, relative."""
    outputs = []
    for file in sorted(p for p in part.rglob("*") if p.is_file()):
        name = file.relative_to(part)
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        file.replace(target)
        outputs.append(str(name))
    shutil.rmtree(part)
    return outputs


def build(
    notebooks: list[Path],
    paper_dir: Path = paths.PAPER_DIR,
    workers: int = 2,
    cell_timeout: float = CELL_TIMEOUT,
) -> Path:
    """Execute ``notebooks`` and replace ``paper_dir`` with their outputs; all or nothing.

    A notebook whose file is unchanged, when nothing shared with the others changed, is not
    run again: its outputs are carried over from ``paper_dir``; the numbers and the report
    are always made anew from every notebook's outputs. The others run on ``workers`` warm
    kernels (see :class:`~analysis.paper.build.scheduler.NotebookRunner`), the first of
    which checks the inputs; a cell running longer than ``cell_timeout`` seconds fails the
    build.
    """
    data = paths.data_dir()
    recover_paper(paper_dir)
    check_writable(paper_dir)
    digest = build_digest(data, notebooks)
    shared = shared_digest(data)
    reused = reusable_notebooks(paper_dir, shared, notebooks)
    to_run = [nb for nb in notebooks if nb.name not in reused]
    runner = NotebookRunner(to_run, workers, cell_timeout) if to_run else None
    staging = paper_dir.with_name(paper_dir.name + ".staging")
    try:
        to_run = longest_first(to_run, paper_dir, data)
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "notebooks").mkdir(parents=True)
        parts = staging / ".parts"
        parts.mkdir()
        runs = []
        if runner is not None:  # the data's files were hashed for the build's own digests
            runs = runner.run(to_run, parts, parts / CHECKED_INPUTS, data_key(data))
        carry_over(staging, paper_dir, reused)
        for notebook in reused:
            print(f"  {Path(notebook).stem:<24} {'':>7}  unchanged", flush=True)
        raise_on_failure(runs, paper_dir)
        _finish(staging, data, notebooks, reused, runs, digest, shared, runner)
    except BaseException:
        if runner is not None:  # no kernel writes into the staging folder once it is gone
            runner.close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if runner is not None:
            runner.close()
    _swap(staging, paper_dir)
    return paper_dir


def _finish(staging, data, notebooks, reused, runs, digest, shared, runner) -> None:
    """Gather the outputs, write numbers.json, the report and the PDF (on a kernel of
    ``runner``, if any: :func:`~analysis.paper.build.reports.write_reports`; a line gives
    its seconds), then the stamp."""
    records = dict(reused)
    for run in runs:
        outputs = _collect(staging / ".parts" / run.notebook.stem, staging)
        records[run.notebook.name] = {
            "sha256": file_sha256(run.notebook),
            "outputs": outputs,
            "seconds": round(run.seconds, 2),
        }
    shutil.rmtree(staging / ".parts", ignore_errors=True)
    arguments = {
        "staging": str(staging),
        "data": str(data),
        "notebooks": [nb.name for nb in notebooks],
    }
    if runner is None:
        started = time.perf_counter()
        write_reports(**arguments)
        seconds = time.perf_counter() - started
    else:
        seconds = runner.call(
            "analysis.paper.build.reports.write_reports",
            "writing numbers.json and the report",
            **arguments,
        )
    report_line("numbers.json and report", seconds)
    stamp = {"inputs_digest": digest, "shared_digest": shared, "notebooks": records}
    (staging / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", "utf-8")
    remember_seconds(data, {run.notebook.name: records[run.notebook.name] for run in runs})
