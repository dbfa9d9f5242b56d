"""Each compared release built in its own folder by the project's own build.

A release's build lives in ``compare/.builds/<release digest>/`` (``data/`` and ``paper/``):
``python -m analysis.paper.make paper`` runs there with ``$STEERBENCH_DATA_DIR`` pointing at
that ``data/``, so the import, its verification and the content-keyed reuse are exactly
those of ``make paper``, and neither the project's ``data/`` nor ``paper/`` is touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from analysis import paths
from analysis.release.identity import ReleaseError, locate_release, release_identity

#: Characters of the release digest that name its build folder.
DIGEST_CHARS = 16


class CompareError(RuntimeError):
    """A release cannot be compared; ``status`` is the exit status to end with."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ReleaseBuild:
    """One release and the folder its build was made in."""

    release_dir: Path
    version: str
    digest: str
    folder: Path

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def paper(self) -> Path:
        return self.folder / "paper"

    @property
    def name(self) -> str:
        """What the comparison calls the release: its folder's name."""
        return self.release_dir.name


def build_release(release_dir: str | os.PathLike[str], builds_root: Path) -> ReleaseBuild:
    """Import and build the release at ``release_dir`` under ``builds_root`` (reused when
    nothing it reads changed). A refusal of the import or the build raises
    :class:`CompareError` with the build's own ``error:`` message and exit status."""
    root = paths.release_dir(release_dir)
    try:
        layout = locate_release(root)
        digest = release_identity(layout)
    except ReleaseError as error:
        raise CompareError(str(error).splitlines()[0]) from None
    folder = builds_root / digest[:DIGEST_CHARS]
    (folder / "data").mkdir(parents=True, exist_ok=True)
    built = ReleaseBuild(root, layout.version, digest, folder)
    environment = {**os.environ, "STEERBENCH_DATA_DIR": str(built.data)}
    command = [
        sys.executable,
        "-m",
        "analysis.paper.make",
        "paper",
        "--release-dir",
        str(root),
    ]
    command += ["--paper-dir", str(built.paper)]
    print(f"Building {root} in {folder}", flush=True)
    done = subprocess.run(
        command, env=environment, cwd=paths.PROJECT_ROOT, stderr=subprocess.PIPE, text=True
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        message = next((line for line in lines if line.startswith("error: ")), None)
        message = message.removeprefix("error: ") if message else (lines or ["build failed"])[-1]
        raise CompareError(message, done.returncode)
    return built
