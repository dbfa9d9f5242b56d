"""Each compared release built in its own folder by the project's own build.

A release's build lives in ``compare/.builds/<key>/`` (``data/`` and ``paper/``), the key
naming the release's digest and its folder (:func:`locate`):
``python -m analysis.paper.make paper`` runs there with ``$STEERBENCH_DATA_DIR`` pointing at
that ``data/``, so the import, its verification and the content-keyed reuse are exactly
those of ``make paper``, and neither the project's ``data/`` nor ``paper/`` is touched.

The build's ``data/`` holds the release's parts under the import's names
(``data/scenarios``, ``data/runs/<version>``); :func:`release_file` names such a copy by the
user's own file, and :func:`release_key` by its place in any release (what a number's
inputs are compared by).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from analysis import paths
from analysis.release.identity import ReleaseError, locate_release, release_identity

#: Characters of the build key (the release's digest and folder) that name its build folder.
DIGEST_CHARS = 16
#: Seconds an interrupted build may take to stop its kernels before it is killed.
STOP_SECONDS = 30


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
    scenario_set: str = paths.DEFAULT_SCENARIO_SET

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


def _places(build: ReleaseBuild, version: str, scenario_set: str) -> list[tuple[str, str]]:
    """(part of the build's ``data/``, the same part in a release) pairs, the most specific
    first: the import's placements (:mod:`analysis.release.importer`) read backwards."""
    return [
        ("scenarios/parity-vectors.json", paths.RELEASE_PARITY_VECTORS.as_posix()),
        ("scenarios", f"{paths.RELEASE_SCENARIO_ROOT.as_posix()}/{scenario_set}"),
        (f"runs/{build.version}", f"{paths.RELEASE_RESULTS_ROOT.as_posix()}/{version}"),
        (f"runs/{paths.SAMPLE_RUN_NAME}", paths.RELEASE_SAMPLE_ARTIFACTS.as_posix()),
    ]


def _in_data(path: str | os.PathLike[str], build: ReleaseBuild) -> str | None:
    """``path`` (absolute, or as the build prints it: relative to the project) relative to
    the build's ``data/``, POSIX-style; None when it lies elsewhere."""
    where = Path(path)
    if not where.is_absolute():
        where = paths.PROJECT_ROOT / where
    data = build.data.resolve()
    where = Path(os.path.normpath(where))
    return where.relative_to(data).as_posix() if where.is_relative_to(data) else None


def _placed(inside: str, build: ReleaseBuild, version: str, scenario_set: str) -> str | None:
    for copy, original in _places(build, version, scenario_set):
        if inside == copy or inside.startswith(copy + "/"):
            return original + inside[len(copy) :]
    return None


def release_key(path: str | os.PathLike[str], build: ReleaseBuild) -> str:
    """What a build input is in any release: its path inside the release, the release's
    version and scenario set written ``<release>`` and ``<scenario set>`` (two releases that
    differ only in their names hold the same inputs); another file of the build's ``data/``
    is ``data/<path>``, a file outside it keeps ``path``.

    Examples
    --------
    >>> from pathlib import Path
    >>> build = ReleaseBuild(Path("/r/old"), "v1", "ab", Path("/x/.builds/ab"), "set-1")
    >>> release_key("/x/.builds/ab/data/runs/v1/leaderboard.json", build)
    'results/<release>/leaderboard.json'
    >>> release_key("/x/.builds/ab/data/scenarios/a-001.json", build)
    'scenario-sets/<scenario set>/a-001.json'
    >>> release_key("/x/.builds/ab/data/runs/reference-policies", build)
    'data/runs/reference-policies'
    """
    inside = _in_data(path, build)
    if inside is None:
        return str(path)
    return _placed(inside, build, "<release>", "<scenario set>") or f"data/{inside}"


def release_file(path: str | os.PathLike[str], build: ReleaseBuild) -> str:
    """The user's own file that the build's copy ``path`` was imported from (``path`` itself
    when it is no such copy).

    Examples
    --------
    >>> from pathlib import Path
    >>> build = ReleaseBuild(Path("/r/old"), "v1", "ab", Path("/x/.builds/ab"), "set-1")
    >>> release_file("/x/.builds/ab/data/runs/v1/leaderboard.json", build)
    '/r/old/results/v1/leaderboard.json'
    """
    inside = _in_data(path, build)
    placed = None if inside is None else _placed(inside, build, build.version, build.scenario_set)
    return str(build.release_dir / placed) if placed else str(path)


def users_files(text: str, build: ReleaseBuild) -> str:
    """``text`` (the build's messages) with each path into the build's ``data/`` (absolute,
    or relative to the project) replaced by the user's file (:func:`release_file`)."""
    folder = build.folder.resolve()
    spellings = [re.escape(str(folder))]
    if folder.is_relative_to(paths.PROJECT_ROOT):
        spellings.append(re.escape(str(folder.relative_to(paths.PROJECT_ROOT))))
    pattern = re.compile(rf"(?<![\w/.])(?:{'|'.join(spellings)})/data(?:/[^\s:;,'\"()]*)?")
    return pattern.sub(lambda match: release_file(match[0], build), text)


def locate(release_dir: str | os.PathLike[str], builds_root: Path) -> ReleaseBuild:
    """The release at ``release_dir`` and the folder its build goes in, named by the
    release's digest and its folder: an import is of one release folder (a copy elsewhere is
    imported anew), so copies of one release at two places build apart, and two
    comparisons at once never re-import a folder the other reads. A folder that is no
    release raises :class:`CompareError` naming it."""
    root = paths.release_dir(release_dir)
    try:
        layout = locate_release(root)
        digest = release_identity(layout)
    except ReleaseError as error:
        raise CompareError(str(error).splitlines()[0]) from None
    key = hashlib.sha256(f"{digest}\n{root}".encode()).hexdigest()
    folder = builds_root / key[:DIGEST_CHARS]
    return ReleaseBuild(root, layout.version, digest, folder, layout.scenario_set)


def refusal(stderr: str, build: ReleaseBuild) -> str:
    """The build's refusal as the user reads it: its ``error:`` message with every detail
    line after it, each path naming the user's file; the build's own note that its
    (internal) paper folder was left alone is dropped."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith("error: ")), None)
    kept = lines[start:] if start is not None else lines[-1:] or ["the build failed"]
    kept[0] = kept[0].removeprefix("error: ")
    internal = f"Nothing was written to {build.paper.resolve()}"
    kept = [line for line in kept if not line.startswith(internal)]
    return users_files("\n".join(kept), build)


def _run(command: list[str], environment: dict[str, str]) -> subprocess.CompletedProcess:
    """Run the build in its own process group; on Ctrl-C, send that group the SIGINT a
    terminal sends (the build stops its kernels and says so), kill the group if it takes
    longer than :data:`STOP_SECONDS`, then raise ``KeyboardInterrupt``: nothing the build
    started is left running."""
    process = subprocess.Popen(
        command,
        env=environment,
        cwd=paths.PROJECT_ROOT,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,
    )
    try:
        _, stderr = process.communicate()
    except KeyboardInterrupt:
        _stop(process)
        raise
    return subprocess.CompletedProcess(command, process.returncode, None, stderr)


def _stop(process: subprocess.Popen) -> None:
    """Interrupt ``process``'s group as Ctrl-C would, wait for it, kill what is left."""
    try:
        os.killpg(process.pid, signal.SIGINT)
        process.communicate(timeout=STOP_SECONDS)
    except (ProcessLookupError, subprocess.TimeoutExpired, KeyboardInterrupt):
        pass  # gone already, too slow, or a second Ctrl-C: kill it
    with contextlib.suppress(ProcessLookupError):  # whatever of its group is still there
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def build_release(built: ReleaseBuild) -> ReleaseBuild:
    """Import and build the release ``built`` names in its folder (reused when nothing it
    reads changed). A refusal of the import or the build raises :class:`CompareError` with
    the build's whole ``error:`` message (:func:`refusal`) and exit status."""
    built.data.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "STEERBENCH_DATA_DIR": str(built.data)}
    command = [sys.executable, "-m", "analysis.paper.make", "paper"]
    command += ["--release-dir", str(built.release_dir), "--paper-dir", str(built.paper)]
    print(f"Building {built.release_dir} in {built.folder}", flush=True)
    done = _run(command, environment)
    if done.returncode == 130:
        raise KeyboardInterrupt
    if done.returncode != 0:
        raise CompareError(refusal(done.stderr, built), done.returncode)
    return built
