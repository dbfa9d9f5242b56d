"""What identifies an import and a build, so that ``make data`` and ``make paper`` redo
exactly what changed (content digests, never timestamps).

- A release is identified by its location and by the sha256 of the files that pin it: every
  ``checksums.txt`` under ``results/<version>/``, ``release-manifest.json``, and the files
  no hash pins but the analysis reads (``MANIFEST.md``, ``_SCENARIO_PATTERNS.json``,
  ``parity-vectors.json``, ``sample-artifacts/``).
- A build is identified by the digest of everything it reads: the imported release
  (``data/scenarios``, ``data/runs``), the notebooks, the package, the figure style and the
  pinned dependencies. Added, deleted or rewritten files change it, whatever their times.

``python -m analysis.identity data|paper`` is what ``make data`` and ``make paper`` run: it
imports the release when its identity differs from the imported one, then, for ``paper``,
builds only when the build digest differs from the one ``paper/.built`` records. This module
imports only the standard library, so the no-op check stays well under a second.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from analysis import paths
from analysis.files import InputFileError, read_json
from analysis.help_text import parser as help_parser
from analysis.lock import LockedError, ProjectLock

PAPER_STAMP = ".built"
#: What an interrupted import leaves, said on Ctrl-C.
INTERRUPTED_IMPORT = "a release import cut short is rolled back by the next command"
LOCK_NAME = ".build.lock"


class ReleaseError(RuntimeError):
    """The release folder is missing, unreadable or inconsistent with its own pins."""


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass(frozen=True)
class ReleaseLayout:
    """Where a release keeps its parts; version and scenario set come from the release."""

    root: Path
    version: str
    scenario_set: str

    @property
    def results(self) -> Path:
        return self.root / paths.RELEASE_RESULTS_ROOT / self.version

    @property
    def manifest(self) -> Path:
        return self.results / paths.RELEASE_MANIFEST

    @property
    def scenarios(self) -> Path:
        return self.root / paths.RELEASE_SCENARIO_ROOT / self.scenario_set

    @property
    def parity_vectors(self) -> Path:
        return self.root / paths.RELEASE_PARITY_VECTORS

    @property
    def sample(self) -> Path:
        return self.root / paths.RELEASE_SAMPLE_ARTIFACTS


def locate_release(root: Path) -> ReleaseLayout:
    """Find the release's version (``results/<version>/release-manifest.json``) and set.

    Several versions in one folder are told apart by ``$STEERBENCH_RELEASE`` (e.g.
    ``v2026-05``); the scenario set is the manifest's ``scenario_set`` field.
    """
    hint = (
        "Point the project at your clone of the release repository, for example:\n"
        "    make paper RELEASE_DIR=/path/to/steerbench-work"
    )
    if not root.is_dir():
        raise ReleaseError(f"{root}: no release folder there.\n{hint}")
    results = root / paths.RELEASE_RESULTS_ROOT
    found = sorted(p.parent.name for p in results.glob(f"*/{paths.RELEASE_MANIFEST}"))
    wanted = os.environ.get("STEERBENCH_RELEASE")
    if wanted:
        found = [v for v in found if v == wanted]
    if not found:
        what = f"results/{wanted or '<version>'}/{paths.RELEASE_MANIFEST}"
        raise ReleaseError(f"{root}: not a SteerBench-Work release (no {what}).\n{hint}")
    if len(found) > 1:
        raise ReleaseError(
            f"{results}: several releases ({', '.join(found)}); choose one with "
            "STEERBENCH_RELEASE=<version>"
        )
    version = found[0]
    manifest_path = results / version / paths.RELEASE_MANIFEST
    manifest = read_json(manifest_path, error=ReleaseError)
    if not isinstance(manifest, dict):
        raise ReleaseError(f"{manifest_path}: not a JSON object")
    named = manifest.get("release", version)
    if named != version:
        from analysis.typed import shown  # refusals only: the no-op check stays lean

        raise ReleaseError(
            f"{manifest_path}: release {shown(named)} does not match its folder {version!r}"
        )
    scenario_set = manifest.get("scenario_set")
    if not isinstance(scenario_set, str) or not scenario_set or "/" in scenario_set:
        raise ReleaseError(f"{manifest_path}: scenario_set missing or not a folder name")
    layout = ReleaseLayout(root, version, scenario_set)
    if not layout.scenarios.is_dir():
        raise ReleaseError(f"{layout.scenarios}: scenario set named by {manifest_path} missing")
    return layout


def _walk(root: Path) -> Iterable[Path]:
    """Files under ``root`` in a stable order, skipping hidden entries and caches."""
    if root.is_file():
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(folder) / name


def tree_digest(parts: Iterable[tuple[str, Path | str]]) -> str:
    """sha256 over each file's name (relative to its part) and content sha256.

    A part given as a string (not a path) joins the digest with its own text.
    """
    digest = hashlib.sha256()
    for label, root in parts:
        digest.update(f"[{label}]\n".encode())
        if isinstance(root, str):
            digest.update(f"{hashlib.sha256(root.encode()).hexdigest()}  =\n".encode())
            continue
        for file in _walk(root):
            name = file.relative_to(root) if root.is_dir() else file.name
            digest.update(f"{file_sha256(file)}  {name}\n".encode())
    return digest.hexdigest()


def release_identity(layout: ReleaseLayout) -> str:
    """The release's identity digest (its pins, and the unpinned files the analysis reads)."""
    pinned = [*sorted(layout.results.rglob("checksums.txt")), layout.manifest]
    unpinned = [
        layout.scenarios / "MANIFEST.md",
        layout.scenarios / "_SCENARIO_PATTERNS.json",
        layout.parity_vectors,
        layout.sample,
    ]
    present = [*pinned, *(part for part in unpinned if part.exists())]
    return tree_digest((str(part.relative_to(layout.root)), part) for part in present)


def import_is_current(layout: ReleaseLayout, identity: str, data: Path) -> bool:
    """Whether ``data`` holds a complete import of exactly this release."""
    stamp = paths.imported_release(data)
    return (
        stamp.get("release_dir") == str(layout.root)
        and stamp.get("release_digest") == identity
        and (data / "scenarios" / "MANIFEST.md").is_file()
        and (data / "runs" / layout.version / paths.RELEASE_MANIFEST).is_file()
    )


def build_inputs(data: Path, notebooks: Iterable[Path]) -> list[tuple[str, Path]]:
    """Everything a build reads, as (label, path) parts for :func:`tree_digest`."""
    root = paths.PROJECT_ROOT
    return [
        ("data/scenarios", data / "scenarios"),
        ("data/runs", data / "runs"),
        *((f"notebooks/{nb.name}", nb) for nb in sorted(notebooks)),
        ("analysis", root / "analysis"),
        ("figures", root / "figures"),
        ("pyproject.toml", root / "pyproject.toml"),
        ("requirements.lock", root / "requirements.lock"),
    ]


def build_digest(data: Path, notebooks: Iterable[Path]) -> str:
    """The digest a build of ``notebooks`` on ``data`` is keyed by."""
    stamp = paths.imported_release(data)
    return tree_digest(
        [("release", str(stamp.get("release_digest"))), *build_inputs(data, notebooks)]
    )


def shared_digest(data: Path) -> str:
    """The digest of what every notebook shares (all build inputs but the notebooks)."""
    return build_digest(data, [])


def default_notebooks() -> list[Path]:
    """Every notebook of the paper, in order."""
    return sorted(paths.NOTEBOOKS_DIR.glob("*.ipynb"))


def lock_for(data: Path) -> ProjectLock:
    """The project lock: one import or build at a time on one data folder."""
    return ProjectLock(data / LOCK_NAME, "build or import of this project")


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


def ensure_imported(release: Path | None = None, data: Path | None = None) -> str:
    """Import the release unless exactly it is imported already; return what was done."""
    data = data or paths.data_dir()
    root = paths.release_dir(release)
    from analysis import release as release_import  # standard library only

    release_import.recover_import(data)
    layout = locate_release(root)
    identity = release_identity(layout)
    if import_is_current(layout, identity, data):
        return f"Release {root} ({layout.version}, {identity[:12]}) is imported."
    found = release_import.import_release(root, data)
    return found.summary()


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.identity data|paper [--paper-dir DIR]``."""
    parser = help_parser("python -m analysis.identity", __doc__)
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
        from analysis.typed import error_text  # refusals only: the no-op check stays lean

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
    command = [sys.executable, "-m", "analysis.build", "--paper-dir", str(paper_dir)]
    if args.workers is not None:
        command += ["--workers", str(args.workers)]
    os.execv(sys.executable, command)
    return 1  # not reached


if __name__ == "__main__":
    # As a script this module is ``__main__``: its ReleaseError is not the one that
    # analysis.release raises (imported from analysis.identity), so run the imported module.
    from analysis.identity import main as _main

    sys.exit(_main())
