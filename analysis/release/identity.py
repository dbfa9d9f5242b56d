"""What identifies an import of a release, so that ``make data`` redoes exactly what changed
(content digests, never timestamps).

A release is identified by its location and by the sha256 of the files that pin it: every
``checksums.txt`` under ``results/<version>/``, ``release-manifest.json``, and the files no
hash pins but the analysis reads (``MANIFEST.md``, ``_SCENARIO_PATTERNS.json``,
``parity-vectors.json``, ``sample-artifacts/``). :func:`tree_digest` is the digest both an
import and a build (:mod:`analysis.paper.make`) are keyed by. This module imports only the
standard library, so the no-op check of ``make paper`` stays well under a second.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from analysis import paths
from analysis.files.digests import remembered_sha256
from analysis.files.lock import ProjectLock
from analysis.files.reading import read_json

#: What an interrupted import leaves, said on Ctrl-C.
INTERRUPTED_IMPORT = "a release import cut short is rolled back by the next command"
LOCK_NAME = ".build.lock"


class ReleaseError(RuntimeError):
    """The release folder is missing, unreadable or inconsistent with its own pins."""


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
        from analysis.files.typed import shown  # refusals only: the no-op check stays lean

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

    A part given as a string (not a path) joins the digest with its own text. Each file's
    sha256 is remembered while it is unchanged (:func:`remembered_sha256`): a build digests
    its inputs several ways.
    """
    digest = hashlib.sha256()
    for label, root in parts:
        digest.update(f"[{label}]\n".encode())
        if isinstance(root, str):
            digest.update(f"{hashlib.sha256(root.encode()).hexdigest()}  =\n".encode())
            continue
        for file in _walk(root):
            name = file.relative_to(root) if root.is_dir() else file.name
            digest.update(f"{remembered_sha256(file)}  {name}\n".encode())
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


def lock_for(data: Path) -> ProjectLock:
    """The project lock: one import or build at a time on one data folder."""
    return ProjectLock(data / LOCK_NAME, "build or import of this project")
