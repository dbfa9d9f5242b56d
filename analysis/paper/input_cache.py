"""The build's checked inputs, kept between builds.

Loading and cross-checking every input
(:func:`analysis.paper.sections.loading.write_checked_inputs`) is the longest step before a
large release's notebooks can start: at 1,000 conditions it parses and checks some 120 MB of
per-trial verdicts. Its result depends only on the files it
reads, the package code it ran and the pinned dependencies, so a build keeps it in
``data/.checked-inputs/`` and the next build reuses it when all of those are unchanged:

- the data: the digest of ``data/scenarios`` and ``data/runs`` (every file's name and
  sha256), of the imported release's identity and of the folders' paths;
- the code: the sha256 of every module of the package loaded when the check ended (Python
  runs no code it has not loaded, so a change anywhere else cannot change the result), with
  ``pyproject.toml``, ``requirements.lock`` and the Python version.

A changed file, module or pin means a new check; an entry is written to a temporary file
and renamed into place, and only the latest one is kept. ``STEERBENCH_CHECK_INPUTS=always``
turns the reuse off (``benchmarks/bench_paper.py`` times a build both ways).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from analysis import paths
from analysis.files.digests import file_sha256
from analysis.release.identity import tree_digest

#: The folder under the data folder that holds the kept checked inputs.
CACHE_FOLDER = ".checked-inputs"
#: The environment variable that, set to ``always``, checks the inputs in every build.
ALWAYS_CHECK = "STEERBENCH_CHECK_INPUTS"
#: The files outside the package whose content the result also depends on (the pins).
_PINS = ("pyproject.toml", "requirements.lock")


def data_key(data: Path) -> str:
    """The digest of what the check reads under ``data``: its scenario files and runs, and
    the imported release's identity (the data parts of the build's own digest,
    :func:`analysis.paper.make.build_digest`), and where they are (a copy of the folder
    elsewhere is checked anew: the checked frames record their locations)."""
    from analysis.paper.make import data_inputs, release_part

    where = (paths.scenarios_dir(data), paths.runs_dir(data), paths.results_dir(data))
    locations = ("locations", "\n".join(map(str, where)))  # the kept frames name them
    return tree_digest([release_part(data), locations, *data_inputs(data)])


def _code_record() -> dict[str, str]:
    """The sha256 of every package module loaded now, the pins and the Python version,
    keyed by path relative to the project (the version under ``python``)."""
    root = paths.PROJECT_ROOT
    package = root / "analysis"
    record = {"python": sys.version}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and Path(file).is_relative_to(package):
            record[str(Path(file).relative_to(root))] = file_sha256(Path(file))
    for name in _PINS:
        if (root / name).is_file():
            record[name] = file_sha256(root / name)
    return record


def _unchanged(record: dict[str, str]) -> bool:
    """Whether every module, pin and version ``record`` names is as it was."""
    root = paths.PROJECT_ROOT
    for name, digest in record.items():
        if name == "python":
            if digest != sys.version:
                return False
        elif not (root / name).is_file() or file_sha256(root / name) != digest:
            return False
    return True


def _place(source: Path, target: Path) -> None:
    """``source``'s content at ``target`` (replaced): a hard link where the two share a file
    system, else a copy. Entries are replaced by renames, never rewritten, so a link stays
    whole."""
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def reuse(data: Path, key: str, path: Path) -> bool:
    """Put the kept checked inputs of ``key`` at ``path`` when there are some and the code
    they were made with is unchanged; whether it did."""
    if os.environ.get(ALWAYS_CHECK) == "always":
        return False
    folder = data / CACHE_FOLDER
    kept, record = folder / f"{key}.pkl", folder / f"{key}.json"
    try:
        code = json.loads(record.read_text())
        if not (isinstance(code, dict) and _unchanged(code)):
            return False
        _place(kept, Path(path))
    except (OSError, ValueError):
        return False
    return True


def keep(data: Path, key: str, path: Path) -> None:
    """Keep the checked inputs at ``path`` under ``key`` for later builds, with the record
    of the code that made them, and drop older entries; a data folder that cannot be
    written to keeps nothing."""
    folder = data / CACHE_FOLDER
    with contextlib.suppress(OSError):
        folder.mkdir(exist_ok=True)
        record = json.dumps(_code_record(), indent=1, sort_keys=True)
        frames = folder / f".part-{os.getpid()}.pkl"
        _place(Path(path), frames)
        os.replace(frames, folder / f"{key}.pkl")
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".part-", suffix=".json")
        with os.fdopen(handle, "w") as out:
            out.write(record)
        os.chmod(temporary, 0o644)
        os.replace(temporary, folder / f"{key}.json")
        for old in folder.iterdir():
            if old.stem != key:
                old.unlink()
