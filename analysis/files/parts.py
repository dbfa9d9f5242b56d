"""The parts of a release the analysis can do without, and how their absence is told.

A release made by upstream's pipeline alone (its runner, ``validate-run``,
``aggregate-canonical``, ``build-scenarios-detail``, the leaderboard scripts and the
generators of ``MANIFEST.md`` and the parity vectors) has the **required** parts: the
scenario set (its files, ``MANIFEST.md``, ``_SCENARIO_PATTERNS.json``), the parity vectors,
and under ``results/<version>/`` ``release-manifest.json``, ``leaderboard.json`` and
``checksums.txt``. The **optional** parts come from separate steps that pipeline never
runs: the human validation (``human-validation/``), the LLM annotation audit
(``annotation-audit/``), the overlay and repair reports (``overlay-manifest.json``,
``overlay-validator-report.json``, ``repair-summary.json``), ``ARTIFACTS.md``, the sample
run (``sample-artifacts/``) and the per-trial verdict file (``scenarios-detail.json``).

A release lacks an optional part when its checksums do not pin it: the sections that read
it are left out, and the build says which and why. A file the release's checksums pin must
be there (the import refuses it otherwise), save the per-trial verdict file, which a
release may pin and withhold (v2026-05 does). This module imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.files.reading import InputFileError, read_text

#: The per-trial verdict file: a release may pin it by its checksums and still withhold it.
PER_TRIAL_FILE = "scenarios-detail.json"
CHECKSUMS = "checksums.txt"


class MissingPartError(InputFileError):
    """A file the release's checksums pin is not in the imported release."""


@dataclass(frozen=True)
class Part:
    """An optional file of ``results/<version>/`` that some section reads."""

    #: Its path under ``results/<version>/``.
    file: str
    #: What it is, for a reader.
    description: str


HUMAN_LABELS = Part("human-validation/gold-labels.json", "the three human raters' majority labels")
HUMAN_AGREEMENT = Part(
    "human-validation/agreement-report.json", "the three human raters' agreement report"
)
LLM_AUDIT = Part(
    "annotation-audit/agreement-report.json", "the three-model annotation audit's report"
)

#: Every optional part of ``results/<version>/`` (files and folders), for the README and
#: the tests; the sample run (``sample-artifacts/``) sits beside ``results/``.
OPTIONAL_RESULTS = (
    "human-validation",
    "annotation-audit",
    "overlay-manifest.json",
    "overlay-validator-report.json",
    "repair-summary.json",
    "ARTIFACTS.md",
    PER_TRIAL_FILE,
)


def pinned_files(results_dir: Path) -> set[str]:
    """Every path under ``results_dir`` that a ``checksums.txt`` there pins, relative to
    ``results_dir`` (empty when the folder has no ``checksums.txt``)."""
    results_dir = Path(results_dir)
    pinned: set[str] = set()
    for listing in sorted(results_dir.rglob(CHECKSUMS)):
        folder = listing.parent.relative_to(results_dir)
        for line in read_text(listing).splitlines():
            parts = line.split(maxsplit=1)
            if len(parts) == 2:
                name = parts[1].strip().removeprefix("*")
                pinned.add((folder / name).as_posix())
    return pinned


def has_part(results_dir: Path, part: Part) -> bool:
    """Whether the release in ``results_dir`` has ``part``: True when its file is there,
    False when it is not and no ``checksums.txt`` pins it. A pinned file that is missing
    raises :class:`MissingPartError`, naming it."""
    file = Path(results_dir) / part.file
    if file.is_file():
        return True
    if part.file in pinned_files(results_dir):
        raise MissingPartError(f"{file}: missing, though {CHECKSUMS} pins it ({part.description})")
    return False


def absence(results_dir: Path, part: Part) -> str:
    """Why a section that reads ``part`` is left out, in one sentence."""
    results_dir = Path(results_dir)
    shown = Path("results") / results_dir.name / part.file
    return (
        f"{shown.as_posix()} ({part.description}) is not in release {results_dir.name}; "
        "upstream's pipeline does not make it"
    )
