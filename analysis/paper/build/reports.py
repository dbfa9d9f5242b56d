"""What the build writes once the notebooks ran: ``numbers.json`` with its build record, the
HTML report and the PDF (on a warm kernel, or in the build itself when no notebook ran)."""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from analysis import paths
from analysis.files.reading import collector_paused

# jsonschema (which nbformat imports: papermill in the build, the HTML report here) builds
# a Lark grammar for IRI syntax when rfc3987_syntax is importable, a second or more of
# start-up; no notebook schema checks an IRI, so the build, which imports this module
# before any notebook machinery, and the kernel writing the reports do without it.
sys.modules.setdefault("rfc3987_syntax", None)

#: Packages whose versions the build record names.
KEY_PACKAGES = (
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "pingouin",
    "matplotlib",
    "seaborn",
    "pyarrow",
    "papermill",
    "nbconvert",
    "ipykernel",
    "typst",
    "pypdfium2",
)


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


#: Folders whose untracked files the build never reads (your own notebooks in ``explore/``):
#: they do not make a build "dirty". Ignored files never do (``git status`` omits them).
UNREAD_UNTRACKED = ("explore/",)


def uncommitted_changes(root: Path | None = None) -> bool | None:
    """Whether the git checkout at ``root`` (default: the project) has changes the build
    may read: a modified, staged or deleted tracked file, or an untracked file outside
    :data:`UNREAD_UNTRACKED`. Ignored files do not count. None when git cannot say (no
    git, or not a checkout).

    Examples
    --------
    >>> uncommitted_changes(Path("/")) is None  # not a git checkout
    True
    """
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"],
            cwd=paths.PROJECT_ROOT if root is None else root,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    entries = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    skip_next = False
    for entry in entries:
        if skip_next or not entry:  # a rename's or copy's original path, or the end
            skip_next = False
            continue
        code, path = entry[:2], entry[3:]
        skip_next = code[0] in "RC"
        if code == "??" and path.startswith(UNREAD_UNTRACKED):
            continue
        return True
    return False


def build_record(data: Path | None = None) -> dict:
    """What this build was made from: release, git commit and dirty flag (untracked files
    the build never reads and ignored files left aside: :func:`uncommitted_changes`),
    versions, time."""
    imported = paths.imported_release(data)
    packages = {}
    for name in KEY_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "release_dir": imported.get("release_dir"),
        "release_digest": imported.get("release_digest"),
        "release": imported.get("release"),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": uncommitted_changes(),
        "python": platform.python_version(),
        "packages": packages,
        "built_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def write_reports(staging: str, data: str, notebooks: list[str]) -> None:
    """Write into ``staging`` ``numbers.json`` (the numbers every notebook recorded, with
    the release, the :func:`build_record` of ``data`` and, under ``left_out``, what each
    notebook left out and why, the claims ledger too for another release than the paper's),
    the HTML report and the PDF of the executed ``notebooks`` (names). The build runs this
    on a warm kernel, with the cyclic garbage collector paused: the numbers make many
    objects and no cycles, and the kernel's heap is large after its notebooks."""
    with collector_paused():
        _write_reports(Path(staging), Path(data), notebooks)


def _write_reports(folder: Path, data: Path, notebooks: list[str]) -> None:
    from analysis.paper.claims import other_release
    from analysis.paper.outputs import merge_left_out
    from analysis.paper.pdf import LEDGER_MAKER, write_documents
    from analysis.paper.provenance import json_one_per_line, merge_fragments

    numbers = merge_fragments(folder)
    left_out = merge_left_out(folder)
    release = paths.release(data)
    reason = other_release(release, paths.scenario_set(data))
    if reason is not None:
        left_out.append({"notebook": LEDGER_MAKER, "what": "the claims ledger", "reason": reason})
    document = {
        "release": release,
        "build": build_record(data),
        "left_out": left_out,
        "numbers": numbers,
    }
    (folder / "numbers.json").write_text(json_one_per_line(document, "numbers"), "utf-8")
    write_documents(folder, [folder / "notebooks" / name for name in notebooks], document)
