"""What ``make data`` and ``make paper`` run: ``python -m analysis.paper.make data|paper``.

It imports the release when its identity differs from the imported one
(:func:`analysis.release.importer.ensure_imported`), then, for ``paper``, builds only when the
build digest differs from the one ``paper/.built`` records. A build is identified by the
digest of everything it reads: the imported release (``data/scenarios``, ``data/runs``), the
notebooks, the package, the figure style and the pinned dependencies. Added, deleted or
rewritten files change it, whatever their times. This module imports only the standard
library, so the no-op check stays well under a second.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from analysis import paths
from analysis.files.lock import LockedError
from analysis.files.reading import InputFileError, read_json
from analysis.help_text import parser as help_parser
from analysis.release.identity import INTERRUPTED_IMPORT, ReleaseError, lock_for, tree_digest

PAPER_STAMP = ".built"


def release_part(data: Path) -> tuple[str, str]:
    """The imported release's identity, as a part for :func:`tree_digest`."""
    return ("release", str(paths.imported_release(data).get("release_digest")))


def data_inputs(data: Path) -> list[tuple[str, Path]]:
    """What a build reads of the data folder ``data``: its scenario files and its runs."""
    return [("data/scenarios", data / "scenarios"), ("data/runs", data / "runs")]


def build_inputs(data: Path, notebooks: Iterable[Path]) -> list[tuple[str, Path]]:
    """Everything a build reads, as (label, path) parts for :func:`tree_digest`."""
    root = paths.PROJECT_ROOT
    return [
        *data_inputs(data),
        *((f"notebooks/{nb.name}", nb) for nb in sorted(notebooks)),
        ("analysis", root / "analysis"),
        ("figures", root / "figures"),
        ("pyproject.toml", root / "pyproject.toml"),
        ("requirements.lock", root / "requirements.lock"),
    ]


def build_digest(data: Path, notebooks: Iterable[Path]) -> str:
    """The digest a build of ``notebooks`` on ``data`` is keyed by."""
    return tree_digest([release_part(data), *build_inputs(data, notebooks)])


def shared_digest(data: Path) -> str:
    """The digest of what every notebook shares (all build inputs but the notebooks)."""
    return build_digest(data, [])


def default_notebooks() -> list[Path]:
    """Every notebook of the paper, in order."""
    return sorted(paths.NOTEBOOKS_DIR.glob("*.ipynb"))


def recover_paper(paper_dir: Path) -> bool:
    """Restore ``paper.previous`` when a crash between the two renames left no ``paper/``."""
    previous = paper_dir.with_name(paper_dir.name + ".previous")
    if previous.is_dir() and not paper_dir.exists():
        previous.rename(paper_dir)
        return True
    return False


def paper_digest(paper_dir: Path) -> str | None:
    """The build digest ``paper/.built`` records (None if absent or unreadable)."""
    try:
        record = read_json(paper_dir / PAPER_STAMP)
    except InputFileError:
        return None
    return record.get("inputs_digest") if isinstance(record, dict) else None


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.paper.make data|paper [--paper-dir DIR]``."""
    parser = help_parser("python -m analysis.paper.make", __doc__)
    parser.add_argument(
        "command",
        choices=["data", "paper"],
        help="data: import the release if needed; paper: import, then build if needed",
    )
    parser.add_argument("--release-dir", help="release folder (default: $RELEASE_DIR)")
    parser.add_argument(
        "--paper-dir",
        type=Path,
        default=paths.PAPER_DIR,
        help="where the paper is built (default: paper/)",
    )
    parser.add_argument("--force", action="store_true", help="build even when up to date")
    parser.add_argument(
        "--workers", type=int, help="kernels the build runs at once (default: the build's own)"
    )
    args = parser.parse_args(argv)
    data = paths.data_dir()
    lock = lock_for(data)
    handed_over = False  # the build inherits the lock (same PID after exec)
    try:
        lock.acquire()
        from analysis.release.importer import ensure_imported

        print(ensure_imported(args.release_dir, data))
        if args.command == "data":
            return 0
        paper_dir = args.paper_dir.resolve()
        recover_paper(paper_dir)
        digest = build_digest(data, default_notebooks())
        if not args.force and paper_digest(paper_dir) == digest:
            print(f"{paper_dir} is up to date (inputs {digest[:12]}).")
            return 0
        handed_over = True
    except (ReleaseError, LockedError, OSError, ValueError) as error:
        from analysis.files.typed import error_text  # refusals only: the no-op check stays lean

        print(f"error: {error_text(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted; {INTERRUPTED_IMPORT}", file=sys.stderr)
        return 130
    finally:
        if not handed_over:
            lock.release()
    sys.stdout.flush()
    # The build keeps this PID, so it inherits the lock and releases it when done.
    command = [sys.executable, "-m", "analysis.paper.build", "--paper-dir", str(paper_dir)]
    if args.workers is not None:
        command += ["--workers", str(args.workers)]
    os.execv(sys.executable, command)
    return 1  # not reached


if __name__ == "__main__":
    # As a script this module is ``__main__``: its ReleaseError is not the one that
    # analysis.release.importer raises, so run the imported module.
    from analysis.paper.make import main as _main

    sys.exit(_main())
