"""Build the paper: run every notebook, then move all outputs into ``paper/`` at once.

``python -m analysis.paper.build`` (``make paper``, when its inputs changed) holds the project
lock, restores ``paper.previous`` if a crash left no ``paper/``, checks that ``paper/`` can
be written, and starts its warm kernels (one per worker, the notebooks' imports done once,
reset to a fresh kernel's state before each notebook). The first kernel to answer checks
every input, before its own imports and while the others import: the scenario table, the
published conditions (leaderboard cross-check) and the per-trial verdicts under
``data/runs``, keeping the checked frames for the notebooks that read them (papermill
parameter ``checked_inputs``), which start once the check passed; the notebooks that read
none of them run meanwhile on the other kernels. It executes ``notebooks/*.ipynb`` with
papermill into a staging folder on the kernels (a cell that runs too long or a kernel that
dies fails the build), printing one line per notebook, merges their numbers into
``numbers.json`` with a ``build`` record (release, git commit, versions, time), renders the
HTML report (``index.html``) and the PDF, writes the stamp ``.built`` keyed by the digest
of every input, and replaces ``paper/`` only when every step succeeded. A failing notebook
is named with its cell, and its partly executed copy is kept in ``paper.failed/``. When
only some notebooks changed (nothing else they read did), only those run again; the
others' outputs are carried over from ``paper/``, whose ``.built`` lists each notebook's
outputs, and ``numbers/`` keeps each one's numbers.
"""

from __future__ import annotations

import gc
import json
import shutil
import sys
import time
from pathlib import Path

from analysis import paths
from analysis.files.lock import LockedError
from analysis.files.typed import error_text
from analysis.help_text import parser as help_parser
from analysis.paper.build_errors import BuildError, NotebookFailed
from analysis.paper.checked_inputs import CHECKED_INPUTS
from analysis.paper.failed_notebooks import raise_on_failure
from analysis.paper.make import (
    build_digest,
    default_notebooks,
    recover_paper,
    shared_digest,
)
from analysis.paper.notebook_runner import CELL_TIMEOUT, NotebookRunner, longest_first
from analysis.paper.reports import write_reports
from analysis.paper.unchanged_notebooks import STAMP, carry_over, reusable_notebooks
from analysis.release.identity import ReleaseError, file_sha256, lock_for

# The analysis stack and the notebook machinery are imported where they are first needed,
# so that a refusal (busy lock, read-only paper/, bad input) comes within a second or two.


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
    kernels (see :class:`NotebookRunner`), the first of which checks the inputs; a cell
    running longer than ``cell_timeout`` seconds fails the build.
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
        to_run = longest_first(to_run, paper_dir)
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "notebooks").mkdir(parents=True)
        parts = staging / ".parts"
        parts.mkdir()
        runs = runner.run(to_run, parts, parts / CHECKED_INPUTS) if runner else []
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
    ``runner``, if any: :func:`write_reports`), then the stamp."""
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
        write_reports(**arguments)
    else:
        runner.call(
            "analysis.paper.reports.write_reports",
            "writing numbers.json and the report",
            **arguments,
        )
    stamp = {"inputs_digest": digest, "shared_digest": shared, "notebooks": records}
    (staging / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", "utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.paper.build [--paper-dir DIR] [notebook ...]``."""
    parser = help_parser("python -m analysis.paper.build", __doc__)
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks to run (default: notebooks/*.ipynb)"
    )
    parser.add_argument(
        "--paper-dir",
        type=Path,
        default=paths.PAPER_DIR,
        help="where the paper is built (default: paper/)",
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="kernels at once (default 2; at least 1)"
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=CELL_TIMEOUT,
        help=f"seconds one cell may run before the build fails (default {CELL_TIMEOUT})",
    )
    args = parser.parse_args(argv)
    notebooks = [nb.resolve() for nb in args.notebooks] or default_notebooks()
    paper_dir = args.paper_dir.resolve()
    started = time.perf_counter()
    lock = lock_for(paths.data_dir())
    try:
        lock.acquire()
        build(notebooks, paper_dir, args.workers, args.cell_timeout)
    except LockedError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (BuildError, ReleaseError, ValueError, KeyError, OSError) as error:
        message = error_text(error)
        print(f"error: {message}\nNothing was written to {paper_dir}.", file=sys.stderr)
        return 1 if isinstance(error, NotebookFailed) else 2
    except KeyboardInterrupt:
        print(f"interrupted; nothing was written to {paper_dir}", file=sys.stderr)
        return 130
    finally:
        lock.release()
    seconds = time.perf_counter() - started
    print(f"Built {paper_dir} from {len(notebooks)} notebooks in {seconds:.1f} s.")
    return 0


if __name__ == "__main__":
    status = main()
    # The process ends here: leave its heap out of the interpreter's final garbage
    # collection, which would walk the whole analysis stack (about a second).
    gc.freeze()
    sys.exit(status)
