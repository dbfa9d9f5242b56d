"""Upstream's reference implementation as the tests' oracle.

The package restates upstream's rules in Python; these helpers let a test run upstream's own
scripts (Node.js, no dependencies) on the same inputs and compare. They assemble the scratch
tree upstream's scripts expect (its ``ORACLE.md``): the reference code beside a release's
folders, and the neighbouring ``steerbench-site/src/data`` the maintainer scripts read and
write. A machine without ``node`` fails the test that asks for it, never skips it.

The reference code's location is ``$STEERBENCH_UPSTREAM_DIR``, else
``../shared/steerbench-work-src`` beside the project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from analysis import paths

#: The release's folders a scratch tree takes beside the reference code (those present).
RELEASE_PARTS = ("scenario-sets", "results", "sample-artifacts", "integrations")


def upstream_dir() -> Path:
    """The reference implementation's folder."""
    default = paths.PROJECT_ROOT.parent / "shared" / "steerbench-work-src"
    return Path(os.environ.get("STEERBENCH_UPSTREAM_DIR") or default).resolve()


def node() -> str:
    """The ``node`` executable; a test that needs it fails loudly where it is missing."""
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not on PATH: the differential tests run upstream's code with it")
    if not (upstream_dir() / "src" / "scorer.mjs").is_file():
        pytest.fail(f"upstream's reference code is not at {upstream_dir()}")
    return found


def copy_writable(source: Path, target: Path) -> Path:
    """Copy a (possibly read-only) tree to ``target``, every folder and file writable."""
    shutil.copytree(source, target, copy_function=shutil.copyfile, dirs_exist_ok=True)
    for folder, _, _ in os.walk(target):
        os.chmod(folder, 0o755)
    return target


@dataclass(frozen=True)
class UpstreamTree:
    """A scratch tree in which upstream's scripts run as in its monorepo."""

    root: Path

    @property
    def site_data(self) -> Path:
        """Where the maintainer scripts read and write the site's data."""
        return self.root.parent / "steerbench-site" / "src" / "data"

    def run(
        self,
        script: str,
        *args: str | os.PathLike[str],
        timeout: float = 300,
        preload: str | None = None,
        env: dict[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``node [--import preload] script args...`` in the tree (``env`` added to the
        environment); a failure raises with its output unless ``check`` is false."""
        done = subprocess.run(
            [node(), *(("--import", preload) if preload else ()), script, *map(str, args)],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"upstream's {script} {' '.join(map(str, args))} exited {done.returncode}:\n"
                f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
            )
        return done


def assemble(workdir: Path, release: Path | None = None) -> UpstreamTree:
    """Lay out upstream's code with ``release``'s folders (default: the configured release)
    under ``workdir/tree``, and an empty site data folder beside it."""
    node()
    release = Path(release) if release is not None else paths.release_dir()
    tree = UpstreamTree(copy_writable(upstream_dir(), workdir / "tree"))
    for part in RELEASE_PARTS:
        if (release / part).is_dir():
            copy_writable(release / part, tree.root / part)
    tree.site_data.mkdir(parents=True, exist_ok=True)
    return tree


#: The node driver that renders scenario files with upstream's pipeline.
RENDER_DRIVER = Path(__file__).with_name("upstream_render.mjs")


def render_with_upstream(files: list[Path]) -> dict[Path, dict[str, str]]:
    """Each scenario file's user message as upstream's pipeline renders it: file ->
    ``{"user_input": text}``, or ``{"error": message}`` where upstream throws."""
    done = subprocess.run(
        [node(), str(RENDER_DRIVER), str(upstream_dir()), *map(str, files)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    if done.returncode != 0:
        raise AssertionError(f"{RENDER_DRIVER.name} exited {done.returncode}:\n{done.stderr}")
    return {Path(file): result for file, result in json.loads(done.stdout).items()}
