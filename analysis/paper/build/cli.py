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
dies fails the build), printing one line per step (the check, each notebook, the reports),
merges their numbers into ``numbers.json`` with a ``build`` record (release, git commit,
versions, time), renders the HTML report (``index.html``) and the PDF, writes the stamp
``.built`` keyed by the digest of every input, and replaces ``paper/`` only when every
step succeeded. A failing notebook is named with its cell, and its partly executed copy is
kept in ``paper.failed/``. When only some notebooks changed (nothing else they read did),
only those run again; the others' outputs are carried over from ``paper/``, whose
``.built`` lists each notebook's outputs, and ``numbers/`` keeps each one's numbers.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from analysis import paths
from analysis.files.lock import LockedError
from analysis.files.typed import error_text
from analysis.help_text import parser as help_parser
from analysis.paper.build.errors import BuildError, NotebookFailed
from analysis.paper.build.scheduler import CELL_TIMEOUT
from analysis.paper.build.staging import build
from analysis.paper.make import default_notebooks
from analysis.release.identity import ReleaseError, lock_for

# The analysis stack and the notebook machinery are imported where they are first needed,
# so that a refusal (busy lock, read-only paper/, bad input) comes within a second or two.


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
