"""Build the paper: run every notebook, then move all outputs into ``paper/`` at once.

``python -m analysis.build`` (``make paper``) first loads the scenario table and the
published conditions, so that the consistency gate stops a bad release before anything is
written. It then executes ``notebooks/*.ipynb`` with papermill into a staging folder,
merges their numbers into ``numbers.json``, renders the HTML report (``index.html``) and
the typeset report (``paper.pdf``) and
replaces ``paper/`` with the staging folder only when every step succeeded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import papermill

from analysis import paths
from analysis.leaderboard import ConsistencyError, load_conditions
from analysis.paper_pdf import write_documents
from analysis.provenance import FRAGMENTS, merge_fragments
from analysis.scenarios import ScenarioError, load_scenarios
from analysis.verdicts import VerdictError

STAMP = ".built"


def execute(notebook: Path, staging: Path) -> Path:
    """Run one notebook with papermill, its outputs going to ``staging``."""
    executed = staging / "notebooks" / notebook.name
    papermill.execute_notebook(  # no cwd: papermill's chdir is not thread-safe
        str(notebook),
        str(executed),
        parameters={"output_dir": str(staging)},
        progress_bar=False,
        kernel_name="python3",
    )
    return executed


def build(notebooks: list[Path], paper_dir: Path = paths.PAPER_DIR, workers: int = 2) -> Path:
    """Execute ``notebooks`` and replace ``paper_dir`` with their outputs; all or nothing."""
    scenarios = load_scenarios()
    load_conditions(scenarios)
    staging = paper_dir.with_name(paper_dir.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "notebooks").mkdir(parents=True)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            executed = list(pool.map(lambda nb: execute(nb, staging), notebooks))
        numbers = merge_fragments(staging)
        shutil.rmtree(staging / FRAGMENTS, ignore_errors=True)
        document = {"release": paths.RELEASE, "numbers": numbers}
        (staging / "numbers.json").write_text(json.dumps(document, indent=2) + "\n", "utf-8")
        write_documents(staging, executed)
        (staging / STAMP).touch()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    previous = paper_dir.with_name(paper_dir.name + ".previous")
    shutil.rmtree(previous, ignore_errors=True)
    if paper_dir.exists():
        paper_dir.rename(previous)
    staging.rename(paper_dir)
    shutil.rmtree(previous, ignore_errors=True)
    return paper_dir


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.build [--paper-dir DIR] [notebook ...]``."""
    parser = argparse.ArgumentParser(prog="python -m analysis.build", description=__doc__)
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks to run (default: notebooks/*.ipynb)"
    )
    parser.add_argument("--paper-dir", type=Path, default=paths.PAPER_DIR)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    notebooks = [nb.resolve() for nb in args.notebooks] or sorted(
        paths.NOTEBOOKS_DIR.glob("*.ipynb")
    )
    started = time.perf_counter()
    try:
        build(notebooks, args.paper_dir.resolve(), args.workers)
    except (ConsistencyError, ScenarioError, VerdictError, ValueError) as error:
        print(f"error: {error}\nNothing was written to {args.paper_dir}.", file=sys.stderr)
        return 2
    except papermill.PapermillExecutionError as error:
        print(
            f"error: notebook failed: {error}\nNothing was written to {args.paper_dir}.",
            file=sys.stderr,
        )
        return 1
    print(
        f"Built {args.paper_dir} from {len(notebooks)} notebooks "
        f"in {time.perf_counter() - started:.1f} s."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
