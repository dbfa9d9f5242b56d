"""Import and verify a SteerBench-Work release.

``python -m analysis.release import`` (run by ``make data``) checks every scenario file
against the sha256 pinned in ``release-manifest.json`` and every results file against the
``checksums.txt`` beside it, then copies the release into git-ignored ``data/``. A file the
checksums list but the release lacks is reported as absent, not as corrupt. Any mismatch
stops the import with a message naming each file; nothing is copied.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from analysis import paths


class ReleaseError(RuntimeError):
    """The release folder is missing, incomplete or does not match its checksums."""


@dataclass
class Verification:
    """What checking a release found."""

    release_dir: Path
    verified: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path: Path) -> object:
    """Parse a JSON file; a malformed file raises ``ReleaseError`` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ReleaseError(f"{path}: malformed JSON ({error})") from None


def parse_checksums(path: Path) -> dict[str, str]:
    """``checksums.txt`` lines (``<sha256>  <relative path>``) as {path: sha256}."""
    pinned: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or len(parts[0]) != 64:
            raise ReleaseError(f"{path}:{number}: not a '<sha256>  <file>' line: {line!r}")
        pinned[parts[1].strip()] = parts[0].lower()
    return pinned


def _require_release(release_dir: Path) -> None:
    results = release_dir / paths.RELEASE_RESULTS_SUBDIR
    scenarios = release_dir / paths.RELEASE_SCENARIO_SUBDIR
    if not (results.is_dir() and scenarios.is_dir()):
        raise ReleaseError(
            f"No SteerBench-Work release found at {release_dir} (expected "
            f"{paths.RELEASE_SCENARIO_SUBDIR}/ and {paths.RELEASE_RESULTS_SUBDIR}/ inside it).\n"
            "Point the project at your clone of the release repository, for example:\n"
            "    make paper RELEASE_DIR=/path/to/steerbench-work\n"
            "or export RELEASE_DIR=/path/to/steerbench-work before running make."
        )


def _check(found: Verification, label: str, file: Path, expected: str) -> None:
    if not file.is_file():
        found.absent.append(label)
    elif sha256_file(file) != expected:
        found.mismatched.append(f"{label}: sha256 {sha256_file(file)} != pinned {expected}")
    else:
        found.verified.append(label)


def verify_release(release_dir: Path) -> Verification:
    """Check a release folder against its own pins; return what was found.

    Scenario files are pinned by ``release-manifest.json`` (``scenario_hashes``), results
    files by every ``checksums.txt`` under the results folder. Missing scenario files count
    as mismatches (the corpus must be complete); missing results files are only absent.
    """
    _require_release(release_dir)
    found = Verification(release_dir)
    results = release_dir / paths.RELEASE_RESULTS_SUBDIR
    scenario_dir = release_dir / paths.RELEASE_SCENARIO_SUBDIR
    manifest = read_json(results / "release-manifest.json")
    for scenario_id, expected in sorted(manifest["scenario_hashes"].items()):
        label = str(paths.RELEASE_SCENARIO_SUBDIR / f"{scenario_id}.json")
        _check(found, label, scenario_dir / f"{scenario_id}.json", expected)
    extra = {p.stem for p in scenario_dir.glob("*.json") if not p.name.startswith("_")}
    for scenario_id in sorted(extra - set(manifest["scenario_hashes"])):
        found.mismatched.append(f"{scenario_id}.json: not in release-manifest.json")
    pins: dict[Path, str] = {}
    for checksums in sorted(results.rglob("checksums.txt")):
        for name, expected in parse_checksums(checksums).items():
            file = checksums.parent / name
            if pins.setdefault(file, expected) != expected:
                found.mismatched.append(f"{file.relative_to(release_dir)}: checksum files disagree")
    for file, expected in sorted(pins.items()):
        _check(found, str(file.relative_to(release_dir)), file, expected)
    missing_scenarios = [
        a for a in found.absent if a.startswith(str(paths.RELEASE_SCENARIO_SUBDIR))
    ]
    found.mismatched += [f"{a}: missing" for a in missing_scenarios]
    found.absent = [a for a in found.absent if a not in missing_scenarios]
    return found


def import_release(
    release_dir: Path | None = None, data_dir: Path = paths.DATA_DIR
) -> Verification:
    """Verify the release, then copy it into ``data_dir`` (all or nothing)."""
    release_dir = paths.release_dir(release_dir)
    found = verify_release(release_dir)
    if found.mismatched:
        listing = "\n".join(f"  - {line}" for line in found.mismatched)
        raise ReleaseError(
            f"The release at {release_dir} does not match its checksums; nothing was imported:\n"
            f"{listing}"
        )
    staging = data_dir / ".import-staging"
    shutil.rmtree(staging, ignore_errors=True)
    scenarios = staging / "scenarios"
    shutil.copytree(release_dir / paths.RELEASE_SCENARIO_SUBDIR, scenarios)
    shutil.copy2(release_dir / paths.RELEASE_PARITY_VECTORS, scenarios / "parity-vectors.json")
    shutil.copytree(release_dir / paths.RELEASE_RESULTS_SUBDIR, staging / "results")
    sample = release_dir / paths.RELEASE_SAMPLE_ARTIFACTS
    if sample.is_dir():
        shutil.copytree(sample, staging / "sample")
    _replace_dir_contents(scenarios, data_dir / "scenarios", keep={"README.md"})
    _replace_dir(staging / "results", data_dir / "runs" / paths.RELEASE)
    if sample.is_dir():
        _replace_dir(staging / "sample", data_dir / "runs" / paths.RELEASE_SAMPLE_ARTIFACTS.name)
    shutil.rmtree(staging)
    stamp = {
        "release_dir": str(release_dir),
        "verified": len(found.verified),
        "absent": found.absent,
    }
    (data_dir / ".imported").write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
    return found


def _replace_dir(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    source.rename(target)


def _replace_dir_contents(source: Path, target: Path, keep: set[str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for old in target.iterdir():
        if old.name in keep:
            continue
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    for new in source.iterdir():
        new.rename(target / new.name)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.release import [--release-dir DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m analysis.release", description=__doc__)
    parser.add_argument("command", choices=["import", "verify"])
    parser.add_argument("--release-dir", help="release folder (default: $RELEASE_DIR)")
    args = parser.parse_args(argv)
    try:
        if args.command == "verify":
            found = verify_release(paths.release_dir(args.release_dir))
            if found.mismatched:
                raise ReleaseError("\n".join(found.mismatched))
        else:
            found = import_release(args.release_dir)
    except ReleaseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Release {found.release_dir}: {len(found.verified)} files verified.")
    for name in found.absent:
        print(f"  absent from this release (listed in its checksums): {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
